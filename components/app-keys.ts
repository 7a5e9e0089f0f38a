import type { LegionCore, SendOutcome, WorkflowCommands } from '../src/runtime/core-api';
import type { KeyPress } from './input/decode-keys';
import { typesText } from './input/decode-keys';
import { queueContent } from './modals/approval-queue-model';
import type { Action, Keymap } from './keymap';
import { formatKey } from './keymap';
import type { UiAction } from './state/actions';
import type { UiStore } from './state/store';
import type { Draft, ModalKind, SessionView, UiState } from './state/ui-state';
import { EMPTY_DRAFT, FOLLOW, awaitsUser, canType, focusedSession, isBusy, viewOf } from './state/ui-state';
import type { ModalKeyHandler } from './modals/modal-api';
import type { Theme } from './theme';
import * as edit from './composer/draft-edit';
import { completeMention } from './composer/complete';
import { lineSource } from './lanes/line-source';
import { scrollBy, scrollHome } from './lanes/viewport';
import { lineContext } from './lanes/Lane';
import { sanitize } from './text/ansi';

/**
 * The running workflow one of whose steps talks in `sessionId`, if any, and whether another of
 * its steps' sessions is busy (then interrupting this step leaves the workflow running).
 */
function runningWorkflowOf(state: UiState, sessionId: string): { id: string; name: string; othersRunning: boolean } | null {
  const found = Object.entries(state.workflows ?? {}).find(([, w]) => w.status === 'running' && w.sessions.includes(sessionId));
  if (!found) return null;
  const othersRunning = found[1].sessions.some((id) => {
    const other = id === sessionId ? undefined : state.sessions[id];
    return other !== undefined && (isBusy(other.status) || other.streaming !== '');
  });
  return { id: found[0], name: found[1].name, othersRunning };
}

/** Ctrl+C twice within this many ms quits. */
export const QUIT_WINDOW_MS = 2000;

export interface KeyDeps {
  readonly store: UiStore;
  readonly core: LegionCore;
  readonly workflows: WorkflowCommands;
  readonly keymap: Keymap;
  readonly theme: Theme;
  readonly now: () => number;
  readonly quit: () => void;
  readonly modalKeys: { readonly current: ModalKeyHandler | null };
  /** The focused lane's text width and body height, for scrolling by pages. */
  readonly laneBox: (index: number) => { width: number; bodyHeight: number } | null;
}

/**
 * A queue that opened by itself this recently is not closed by its own key: the user who saw
 * "1 approval pending" and pressed Ctrl+Y as it opened meant to open it, not to close it.
 */
export const OPENED_BY_ITSELF_GRACE_MS = 1000;

const MODAL_OF: Partial<Record<Action, Exclude<ModalKind, 'checkpoints'>>> = {
  help: 'help', approvals: 'approvals', switcher: 'switcher', newSession: 'new-session', history: 'history',
};

/**
 * Route one key press: the open modal first, then the keymap's actions, then editing of the
 * focused lane's draft. Every key clears the last one-line answer (`flash`); each key ends in
 * one dispatch, so one render.
 */
export function handleKey(key: KeyPress, deps: KeyDeps): void {
  const { store, keymap } = deps;
  const state = store.getState();
  const actions: UiAction[] = [];
  if (state.flash) actions.push({ type: 'flash', flash: null });
  if (state.notice) actions.push({ type: 'clear-notice' });
  const session = focusedSession(state);
  const draft = session ? viewOf(state, session.id).draft : EMPTY_DRAFT;
  const action = keymap.match(key.name, draft.text === '');
  if (action !== 'clear' && state.quitArmedAt !== null) actions.push({ type: 'arm-quit', at: null });

  if (state.modal) {
    const used = deps.modalKeys.current?.(key) ?? false;
    // Text typed into an empty approval queue was meant for the composer: the queue closes and
    // the text is typed there, never eaten (docs/modals.md#approval-queue).
    if (!used && state.modal.kind === 'approvals' && session && typesText(key) && queueContent(state.pending).flat.length === 0) {
      actions.push({ type: 'close-modal' });
      editDraft(key, state, session, draft, actions, deps);
      return void store.dispatch(actions);
    }
    if (!used) {
      if (action === 'clear') return void store.dispatch([...actions, { type: 'close-modal' }, ...quitPress(state, deps)]);
      const opener = action === 'checkpoints' ? 'checkpoints' : action ? MODAL_OF[action] : undefined;
      const modal = state.modal;
      const justOpenedByItself = modal.kind === 'approvals' && modal.openedByItselfAt !== undefined && deps.now() - modal.openedByItselfAt < OPENED_BY_ITSELF_GRACE_MS;
      if (action === 'interrupt' || (opener !== undefined && opener === modal.kind && !justOpenedByItself)) actions.push({ type: 'close-modal' });
    }
    return void store.dispatch(actions);
  }

  if (action) {
    runAction(action, state, session, draft, actions, deps);
  } else if (session) {
    editDraft(key, state, session, draft, actions, deps);
  }
  store.dispatch(actions);
}

function runAction(action: Action, state: UiState, session: SessionView | undefined, draft: Draft, out: UiAction[], deps: KeyDeps): void {
  const modal = MODAL_OF[action];
  if (modal) return void out.push({ type: 'open-modal', modal: { kind: modal } });
  switch (action) {
    case 'send':
      if (session) send(state, session, draft, out, deps);
      return;
    case 'newline':
      if (session) editDraft({ name: 'text', text: '\n' }, state, session, draft, out, deps);
      return;
    case 'nextLane':
    case 'prevLane': {
      if (action === 'nextLane' && session && canType(session)) {
        const ids = state.participants.filter((p) => p.status === 'active' && p.kind === 'agent').map((p) => p.id);
        const done = completeMention(draft, ids);
        if (done) {
          out.push({ type: 'set-draft', sessionId: session.id, draft: done.draft });
          if (done.options.length > 1) out.push({ type: 'flash', flash: { level: 'info', text: done.options.map((o) => `@${o}`).join('  ') } });
          return;
        }
      }
      out.push({ type: 'focus-lane', delta: action === 'nextLane' ? 1 : -1 });
      return;
    }
    case 'scrollUp':
    case 'scrollDown':
    case 'scrollTop':
    case 'scrollBottom': {
      const box = deps.laneBox(state.focus);
      if (!session || !box) return;
      const view = viewOf(state, session.id);
      const source = lineSource(session, lineContext(box.width, view.expanded, deps.theme));
      const page = Math.max(1, box.bodyHeight - 1);
      const scroll = action === 'scrollBottom' ? FOLLOW
        : action === 'scrollTop' ? scrollHome(source, box.bodyHeight)
          : scrollBy(source, view.scroll, box.bodyHeight, action === 'scrollUp' ? -page : page);
      out.push({ type: 'set-scroll', sessionId: session.id, scroll });
      return;
    }
    case 'interrupt': {
      if (!session) return;
      // A lane of a running workflow (docs/workflows.md#tui): Esc interrupts its step; Esc in it with nothing to interrupt cancels the whole workflow.
      // Interrupting the only running step ends the workflow (its dependants are skipped), so "Esc again" is offered only while other steps run.
      const workflow = runningWorkflowOf(state, session.id);
      if (isBusy(session.status) || session.streaming !== '') {
        deps.core.cancel(session.id);
        const what = awaitsUser(session) ? `dismissing ${session.initiatorId}'s question…` : `interrupting ${session.responderId}…`;
        out.push({ type: 'flash', flash: { level: 'info', text: workflow?.othersRunning ? `${what} (Esc again cancels workflow ${workflow.name})` : what } });
      } else if (workflow && deps.workflows.cancel(workflow.id)) {
        out.push({ type: 'flash', flash: { level: 'info', text: `cancelling workflow ${workflow.name}: its running steps stop, the rest are skipped` } });
      } else {
        out.push({ type: 'flash', flash: { level: 'info', text: 'nothing to interrupt in this lane' } });
      }
      return;
    }
    case 'clear':
      if (session && draft.text !== '') out.push({ type: 'set-draft', sessionId: session.id, draft: EMPTY_DRAFT }, { type: 'browse-sent', index: null });
      out.push(...quitPress(state, deps));
      return;
    case 'toggleTools':
      if (session) out.push({ type: 'toggle-expanded', sessionId: session.id });
      return;
    case 'checkpoints':
      if (session) out.push({ type: 'open-modal', modal: { kind: 'checkpoints', sessionId: session.id } });
      return;
    case 'compact':
      // The outcome shows in the lane: a folded summary row, or a notice saying why not (docs/context.md).
      if (!session) return;
      void deps.core.compact(session.id);
      out.push({ type: 'flash', flash: { level: 'info', text: `compacting ${session.responderId}'s context…` } });
      return;
    case 'help':
    case 'approvals':
    case 'switcher':
    case 'newSession':
    case 'history':
      return; // opened above
    default: {
      const unreachable: never = action;
      return unreachable;
    }
  }
}

function quitPress(state: UiState, deps: KeyDeps): UiAction[] {
  const now = deps.now();
  if (state.quitArmedAt !== null && now - state.quitArmedAt <= QUIT_WINDOW_MS) {
    deps.quit();
    return [{ type: 'arm-quit', at: null }, { type: 'flash', flash: { level: 'info', text: 'quitting…' } }];
  }
  const again = formatKey(deps.keymap.keysOf('clear')[0] ?? 'ctrl+c');
  return [{ type: 'arm-quit', at: now }, { type: 'flash', flash: { level: 'info', text: `press ${again} again to quit` } }];
}

/**
 * Enter: the draft goes to the lane's responder (`core.send`), or, in a user lane whose agent
 * waits for the user, answers that question (`core.reply`).
 */
function send(state: UiState, session: SessionView, draft: Draft, out: UiAction[], deps: KeyDeps): void {
  if (!canType(session)) return void out.push(readOnlyHint(session, deps));
  const text = edit.expandDraft(draft);
  if (text.trim() === '') return;
  const outcome: SendOutcome = !awaitsUser(session) ? deps.core.send(session.responderId, text, session.name) : deps.core.reply(session.id, text);
  if (!outcome.ok) return void out.push({ type: 'flash', flash: { level: 'error', text: outcome.error } });
  out.push(
    { type: 'set-draft', sessionId: session.id, draft: EMPTY_DRAFT },
    { type: 'sent', text },
    { type: 'set-scroll', sessionId: session.id, scroll: FOLLOW },
  );
  if (outcome.queued) {
    out.push({ type: 'flash', flash: { level: 'info', text: `queued: ${session.responderId} is busy; your message goes when its turn ends` } });
  }
}

function readOnlyHint(session: SessionView, deps: KeyDeps): UiAction {
  const tab = formatKey(deps.keymap.keysOf('nextLane')[0] ?? 'tab');
  const esc = formatKey(deps.keymap.keysOf('interrupt')[0] ?? 'escape');
  if (session.responderId === 'user') {
    return {
      type: 'flash',
      flash: { level: 'warn', text: `read-only: no question of ${session.initiatorId} is waiting for your answer here. ${tab} moves to your lane.` },
    };
  }
  return {
    type: 'flash',
    flash: { level: 'warn', text: `read-only: ${session.initiatorId} ${deps.theme.arrow} ${session.responderId} is between agents. ${esc} interrupts, ${tab} moves to your lane.` },
  };
}

function editDraft(key: KeyPress, state: UiState, session: SessionView, draft: Draft, out: UiAction[], deps: KeyDeps): void {
  const set = (d: Draft | null): void => {
    if (d && d !== draft) out.push({ type: 'set-draft', sessionId: session.id, draft: d });
  };
  // ↑/↓ browse sent messages when the draft is empty or an unchanged recalled one.
  const browsing = draft.text === '' || (state.sentIndex !== null && state.sent[state.sentIndex] === draft.text);
  if (key.name === 'up' || key.name === 'down') {
    const moved = edit.moveVertical(draft, key.name === 'up' ? -1 : 1);
    if (moved) return set(moved);
    if (!browsing || !canType(session)) return;
    if (key.name === 'up') {
      const index = (state.sentIndex ?? state.sent.length) - 1;
      if (index < 0) return;
      out.push({ type: 'browse-sent', index });
      return set(edit.draftOf(state.sent[index]!));
    }
    if (state.sentIndex === null) return;
    const index = state.sentIndex + 1;
    if (index >= state.sent.length) {
      out.push({ type: 'browse-sent', index: null });
      return set(EMPTY_DRAFT);
    }
    out.push({ type: 'browse-sent', index });
    return set(edit.draftOf(state.sent[index]!));
  }
  const change = draftChange(key, draft);
  if (change === undefined) return; // not an editing key
  if (!canType(session)) return void out.push(readOnlyHint(session, deps));
  set(change);
}

/** The draft after an editing key; undefined when the key does not edit. */
function draftChange(key: KeyPress, d: Draft): Draft | undefined {
  switch (key.name) {
    case 'paste': return edit.insertPaste(d, sanitize(key.text));
    case 'text': return edit.insertText(d, sanitize(key.text));
    case 'backspace': return edit.backspace(d);
    case 'delete': return edit.deleteForward(d);
    case 'left': return edit.moveLeft(d);
    case 'right': return edit.moveRight(d);
    case 'ctrl+a': return edit.lineStart(d);
    case 'ctrl+e': return edit.lineEnd(d);
    case 'ctrl+u': return edit.killToLineStart(d);
    case 'ctrl+k': return edit.killToLineEnd(d);
    case 'ctrl+w': return edit.deleteWordBack(d);
    default:
      if (key.text !== '' && [...key.text].length === 1) return edit.insertText(d, key.text);
      return undefined;
  }
}
