import React, { useCallback, useEffect } from 'react';
import type { WorkflowInfo } from '../../src/runtime/core-api';
import type { Participant } from '../../src/collective/participant';
import { checkSessionName, DEFAULT_SESSION_NAME } from '../../src/runtime/core-api';
import type { KeyPress } from '../input/decode-keys';
import type { Draft } from '../state/ui-state';
import type { Line } from '../text/line';
import { draftOf } from '../composer/draft-edit';
import type { ModalProps } from './modal-api';
import { useModalKeys } from './modal-api';
import { matchScore } from './switcher-filter';
import { closeAndShow } from './switcher-show';
import { parseWorkflowLine, workflowChoices, type Choice } from './new-session-workflows';
import { ModalFrame, editField, emptyField, fieldSpans, innerSize, listWindow, marker, pad, selectStyle, useLatest, useSyncState } from './switcher-kit';

/**
 * New named session (docs/design.md#the-tui, Ctrl+N): a participant field completed from the active
 * agents (↑ ↓ pick, Tab completes and moves on), a session name field (empty: `default`),
 * Enter opens `user → participant · name` with `core.openSession` and shows it in a focused
 * lane. An unknown participant, an invalid name or a refusal of the core is shown inline and
 * the dialog stays open. Shift+Tab goes back to the participant; Esc closes.
 * Workflows (docs/workflows.md#tui) are listed below the agents: choosing one turns the second
 * field into its input line (`<input> | name=value…`) and Enter starts it with `workflows.start`.
 */
type Field = 'participant' | 'name';

interface Local {
  readonly participant: Draft;
  readonly name: Draft;
  readonly field: Field;
  readonly pick: number;
  readonly error: string | null;
  /** The workflows, once read (null: not yet, or reading them failed). */
  readonly workflows: readonly WorkflowInfo[] | null;
  readonly starting: boolean;
}

/** Agents, then workflows, matching the typed text. */
function choices(participants: readonly Participant[], workflows: readonly WorkflowInfo[] | null, typed: string): Choice[] {
  return [
    ...candidates(participants, typed).map((p): Choice => ({ kind: 'agent', id: p.id, participant: p })),
    ...workflowChoices(workflows ?? [], typed),
  ];
}

/** Active agents matching the typed text: exact id, then id prefix, then substring of id or name. */
export function candidates(participants: readonly Participant[], typed: string): Participant[] {
  const q = typed.trim().toLowerCase();
  const agents = participants.filter((p) => p.kind === 'agent' && p.status === 'active');
  if (q === '') return agents;
  // Completion is stricter than the switcher's filter: exact, prefix, or substring (no fuzzy).
  const rank = (p: Participant): number => (p.id === q ? 4 : p.id.startsWith(q) ? 3 : (matchScore(`${p.id} ${p.name}`, q) ?? 0));
  return agents.map((p) => ({ p, r: rank(p) })).filter((x) => x.r >= 2).sort((a, b) => b.r - a.r || (a.p.id < b.p.id ? -1 : 1)).map((x) => x.p);
}

export function NewSession(props: ModalProps) {
  const { theme, width, height, core, workflows: service } = props;
  const [get, set] = useSyncState<Local>(() => ({ participant: emptyField(), name: emptyField(), field: 'participant', pick: 0, error: null, workflows: null, starting: false }));
  const latest = useLatest(props);
  const inner = innerSize(theme, width, height);
  useEffect(() => {
    let live = true;
    void service.list().then((workflows) => { if (live) set({ ...get(), workflows }); }, () => undefined);
    return () => { live = false; };
  }, [service, get, set]);

  const onKey = useCallback((key: KeyPress): boolean => {
    const local = get();
    const { core: c, workflows, store } = latest.current;
    const list = choices(c.participants(), local.workflows, local.participant.text);
    const chosenChoice = (): Choice | null => {
      const typed = local.participant.text.trim();
      return list.find((p) => p.id === typed) ?? list[Math.min(local.pick, list.length - 1)] ?? null;
    };
    const chosen = (): string | null => chosenChoice()?.id ?? null;
    const startWorkflow = (name: string): void => {
      const parsed = parseWorkflowLine(local.name.text);
      if (!parsed.ok) { set({ ...local, participant: draftOf(name), field: 'name', error: parsed.error }); return; }
      set({ ...local, participant: draftOf(name), starting: true, error: null });
      void workflows.start(name, parsed.input, parsed.inputs).then((started) => {
        if (started.ok) latest.current.store.dispatch({ type: 'close-modal' });
        else set({ ...get(), starting: false, field: 'name', error: started.error });
      }, (error: unknown) => set({ ...get(), starting: false, error: String(error) }));
    };
    const submit = (): void => {
      if (local.starting) return;
      const choice = chosenChoice();
      if (choice?.kind === 'workflow') { startWorkflow(choice.id); return; }
      const id = chosen();
      if (!id) {
        set({ ...local, field: 'participant', error: local.participant.text.trim() ? `no active agent matches "${local.participant.text.trim()}"` : 'choose a participant' });
        return;
      }
      const name = local.name.text.trim() || DEFAULT_SESSION_NAME;
      const problem = checkSessionName(name);
      if (problem) { set({ ...local, participant: draftOf(id), field: 'name', error: problem }); return; }
      const opened = c.openSession(id, name);
      if (!opened.ok) { set({ ...local, participant: draftOf(id), error: opened.error }); return; }
      closeAndShow(store, opened.sessionId);
    };
    switch (key.name) {
      case 'enter': submit(); return true;
      case 'escape': return false;
      case 'tab':
        if (local.field === 'participant') {
          const id = chosen();
          set({ ...local, participant: id ? draftOf(id) : local.participant, field: 'name', pick: 0, error: null });
        } else {
          set({ ...local, field: 'participant', error: null });
        }
        return true;
      case 'shift+tab': set({ ...local, field: 'participant', error: null }); return true;
      case 'up': case 'down':
        if (local.field === 'participant' && list.length > 0) {
          const pick = Math.min(list.length - 1, Math.max(0, Math.min(local.pick, list.length - 1) + (key.name === 'up' ? -1 : 1)));
          set({ ...local, pick });
        }
        return true;
      default: {
        const current = local.field === 'participant' ? local.participant : local.name;
        const edit = editField(current, key);
        if (!edit.used) return false;
        set(local.field === 'participant'
          ? { ...local, participant: edit.field, pick: 0, error: null }
          : { ...local, name: edit.field, error: null });
        return true;
      }
    }
  }, [get, set, latest]);
  useModalKeys(onKey);

  const local = get();
  const list = choices(core.participants(), local.workflows, local.participant.text);
  const pick = Math.min(local.pick, Math.max(0, list.length - 1));
  const typed = local.participant.text.trim();
  const current = list.find((p) => p.id === typed) ?? list[pick];
  const workflow = current?.kind === 'workflow' ? current.workflow : null;
  const label = (text: string, active: boolean): Line[number] => ({ text: pad(text, 13), tone: active ? 'accent' : 'muted', bold: active });
  const lines: Line[] = [
    [{ text: 'New session', bold: true, tone: 'heading' }, { text: ` ${theme.dot} user ${theme.arrow} participant ${theme.dot} name`, tone: 'muted' }],
    [],
    [label('Participant', local.field === 'participant'), ...fieldSpans(local.participant, local.field === 'participant', 'type to complete')],
    workflow
      ? [label('Input', local.field === 'name'), ...fieldSpans(local.name, local.field === 'name', workflow.inputs.length ? `input | ${workflow.inputs.map((n) => `${n}=…`).join(' | ')}` : 'input')]
      : [label('Session name', local.field === 'name'), ...fieldSpans(local.name, local.field === 'name', DEFAULT_SESSION_NAME)],
    [],
  ];
  if (local.error) lines.push([{ text: local.error, tone: 'error' }], []);
  const rows = Math.max(1, inner.height - lines.length - 2);
  if (local.field === 'participant') {
    const { start, end } = listWindow(list.length, pick, rows);
    for (let i = start; i < end; i++) {
      const choice = list[i]!;
      const row: Line = choice.kind === 'agent'
        ? [marker(theme, i === pick), { text: pad(choice.id, 18), bold: true }, { text: ` ${choice.participant.name}${choice.participant.description ? ` ${theme.dot} ${choice.participant.description}` : ''}`, tone: 'muted' }]
        : [marker(theme, i === pick), { text: pad(choice.id, 18), bold: true }, { text: ` workflow ${theme.dot} ${choice.workflow.steps.length} steps${choice.workflow.description ? ` ${theme.dot} ${choice.workflow.description}` : ''}`, tone: 'muted' }];
      lines.push(selectStyle(theme, row, i === pick));
    }
    if (list.length === 0) lines.push([{ text: local.workflows?.length ? 'No active agent or workflow matches.' : 'No active agent matches.', tone: 'muted' }]);
  } else if (workflow) {
    lines.push([{ text: local.starting ? `Starting ${workflow.name}…` : `Runs ${workflow.name}: ${workflow.steps.join(', ')}, each step in its own lane`, tone: 'muted' }]);
  } else {
    const id = local.participant.text.trim() || '?';
    const name = local.name.text.trim() || DEFAULT_SESSION_NAME;
    lines.push([{ text: `Opens user ${theme.arrow} ${id} ${theme.dot} ${name}`, tone: 'muted' }]);
  }
  while (lines.length < inner.height - 1) lines.push([]);
  lines.push([{ text: local.field === 'participant' ? '↑↓ pick · Tab complete, then name · Enter open · Esc close' : workflow ? 'Enter start · Shift+Tab back · Esc close' : 'Enter open · Shift+Tab participant · Esc close', tone: 'muted' }]);
  return <ModalFrame theme={theme} width={width} height={height} lines={lines} />;
}
