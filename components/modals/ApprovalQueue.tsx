import React, { useCallback, useContext, useEffect, useMemo, useRef } from 'react';
import type { ApprovalPreview } from '../../src/authz/approvals/preview';
import type { PendingApproval } from '../../src/runtime/core-api';
import type { KeyPress } from '../input/decode-keys';
import { typesText } from '../input/decode-keys';
import type { Draft } from '../state/ui-state';
import type { Line, Span } from '../text/line';
import type { ModalProps } from './modal-api';
import { useModalKeys } from './modal-api';
import { ApprovalServicesContext } from './approval-services';
import { applyDecision, chainOf, queueContent, requestLabel, ruleText, targetsOf, type Decision, type DecisionOutcome } from './approval-queue-model';
import { ModalFrame, editField, emptyField, fieldSpans, hardWrap, innerSize, listStep, listWindow, marker, selectStyle, useLatest, useSyncState } from './switcher-kit';
import { sessionLabel } from './switcher-filter';

/**
 * The approval queue (docs/design.md#the-tui, Ctrl+Y; opens by itself, see approval-watch.ts).
 * List: ↑ ↓ move, Space mark, Enter details, y / n approve / reject the marked (or the
 * highlighted), Y / N all shown, a approve and allow the same for the session; n / N ask for
 * an optional reason on one line (Enter confirms, Esc goes back). Details: the request, the
 * rule that asked and a preview (diff or full command); ↑ ↓ PgUp PgDn scroll, y / n / a
 * decide this request, Esc back. Esc in the list closes. Decisions: approval-queue-model.ts.
 */
type Mode = 'list' | 'details' | 'reason';

interface Local {
  readonly selected: string | null;
  /** Fallback position when the selected request disappears. */
  readonly index: number;
  readonly marked: ReadonlySet<string>;
  /** Decided here (hidden at once, before the core's events redraw the list). */
  readonly decided: ReadonlySet<string>;
  readonly mode: Mode;
  readonly detailsId: string | null;
  readonly scroll: number;
  readonly reason: Draft;
  readonly reasonTargets: readonly string[];
  readonly reasonFrom: 'list' | 'details';
  readonly outcome: DecisionOutcome | null;
  /** null while loading. */
  readonly previews: Readonly<Record<string, ApprovalPreview | null>>;
}

const INITIAL: Local = {
  selected: null, index: 0, marked: new Set(), decided: new Set(), mode: 'list', detailsId: null, scroll: 0,
  reason: emptyField(), reasonTargets: [], reasonFrom: 'list', outcome: null, previews: {},
};

function visible(pending: ModalProps['state']['pending'], decided: ReadonlySet<string>) {
  const content = queueContent(pending);
  const flat = content.flat.filter((r) => !decided.has(r.requestId));
  return { ...content, flat };
}

function selectedOf(flat: readonly PendingApproval[], local: Local): PendingApproval | undefined {
  return flat.find((r) => r.requestId === local.selected) ?? flat[Math.min(local.index, flat.length - 1)];
}

export function ApprovalQueue(props: ModalProps) {
  const { state, theme, width, height } = props;
  const services = useContext(ApprovalServicesContext);
  const [get, set] = useSyncState<Local>(() => INITIAL);
  const latest = useLatest(props);
  const mounted = useRef(true);
  useEffect(() => () => { mounted.current = false; }, []);
  const inner = innerSize(theme, width, height);
  const page = Math.max(1, inner.height - 8);

  const loadPreview = useCallback((request: PendingApproval) => {
    if (request.requestId in get().previews) return;
    set({ ...get(), previews: { ...get().previews, [request.requestId]: null } });
    void services.preview(request.toolName, request.input).then(
      (p) => p,
      (error: unknown) => ({ kind: 'json' as const, text: `no preview: ${String(error)}` }),
    ).then((p) => {
      if (mounted.current) set({ ...get(), previews: { ...get().previews, [request.requestId]: p } });
    });
  }, [get, set, services]);

  const decide = useCallback((ids: readonly string[], decision: Decision, reason?: string) => {
    const { core, store, close } = latest.current;
    const local = get();
    const { flat } = visible(latest.current.state.pending, local.decided);
    if (ids.length === 0) return;
    const outcome = applyDecision(core, ids, decision, reason, flat);
    const gone = new Set([...outcome.applied, ...outcome.vanished]);
    const decided = new Set([...local.decided, ...gone]);
    const marked = new Set([...local.marked].filter((id) => !gone.has(id)));
    const rest = flat.filter((r) => !gone.has(r.requestId));
    // Keep the highlight near where it was: the first remaining request after the first target.
    const firstAt = Math.max(0, flat.findIndex((r) => gone.has(r.requestId)));
    const next = rest[Math.min(firstAt, rest.length - 1)];
    set({ ...local, decided, marked, outcome, mode: 'list', detailsId: null, scroll: 0, reason: emptyField(), reasonTargets: [],
      selected: next?.requestId ?? null, index: Math.min(firstAt, Math.max(0, rest.length - 1)) });
    // Close when nothing is left for the user now (the store has the core's latest events,
    // including requests that arrived after the frame the user decided on).
    const left = queueContent(store.getState().pending).flat.filter((r) => !decided.has(r.requestId));
    if (left.length === 0 && outcome.applied.length > 0) {
      close();
      store.dispatch({ type: 'flash', flash: { level: outcome.level, text: outcome.text } });
    }
  }, [get, set, latest]);

  const handle = useCallback((key: KeyPress): boolean => {
    const local = get();
    const { flat } = visible(latest.current.state.pending, local.decided);
    const current = selectedOf(flat, local);
    const move = (delta: number): void => {
      if (flat.length === 0) return;
      const from = current ? flat.indexOf(current) : 0;
      const to = Math.min(flat.length - 1, Math.max(0, from + delta));
      set({ ...local, selected: flat[to]!.requestId, index: to });
    };
    const askReason = (ids: readonly string[], from: 'list' | 'details'): void => {
      if (ids.length > 0) set({ ...local, mode: 'reason', reason: emptyField(), reasonTargets: ids, reasonFrom: from });
    };
    switch (local.mode) {
      case 'reason': {
        if (key.name === 'enter') { decide(local.reasonTargets, 'reject', local.reason.text); return true; }
        if (key.name === 'escape') { set({ ...local, mode: local.reasonFrom, reasonTargets: [] }); return true; }
        const edit = editField(local.reason, key);
        if (edit.used) set({ ...local, reason: edit.field });
        return true;
      }
      case 'details': {
        const id = local.detailsId;
        const step = listStep(key.name, page);
        if (step !== undefined) {
          set({ ...local, scroll: Math.max(0, local.scroll + step) });
          return true;
        }
        switch (key.name) {
          case 'home': set({ ...local, scroll: 0 }); return true;
          case 'end': set({ ...local, scroll: Number.MAX_SAFE_INTEGER }); return true;
          case 'y': if (id) decide([id], 'approve'); return true;
          case 'a': if (id) decide([id], 'allow'); return true;
          case 'n': if (id) askReason([id], 'details'); return true;
          case 'escape': case 'enter': case 'backspace': case 'left':
            set({ ...local, mode: 'list', detailsId: null, scroll: 0 });
            return true;
          default: return false;
        }
      }
      case 'list': {
        const targets = targetsOf(flat, local.marked, current?.requestId ?? null);
        const all = flat.map((r) => r.requestId);
        const step = listStep(key.name, page);
        if (step !== undefined) {
          move(step);
          return true;
        }
        switch (key.name) {
          case 'home': move(-flat.length); return true;
          case 'end': move(flat.length); return true;
          case 'space': {
            if (!current) return true;
            const marked = new Set(local.marked);
            if (marked.has(current.requestId)) marked.delete(current.requestId); else marked.add(current.requestId);
            set({ ...local, marked, selected: current.requestId });
            return true;
          }
          case 'enter':
            if (current) { set({ ...local, mode: 'details', detailsId: current.requestId, scroll: 0, selected: current.requestId }); loadPreview(current); }
            return true;
          case 'y': decide(targets, 'approve'); return true;
          case 'a': decide(targets, 'allow'); return true;
          case 'n': askReason(targets, 'list'); return true;
          case 'Y': decide(all, 'approve'); return true;
          case 'N': askReason(all, 'list'); return true;
          default: return false;
        }
      }
      default: {
        const never: never = local.mode;
        return never;
      }
    }
  }, [get, set, latest, decide, loadPreview, page]);

  useModalKeys(useCallback((key: KeyPress): boolean => {
    // Text typed into an empty list is not for the queue: unused, it goes to the composer (app-keys.ts).
    if (get().mode === 'list' && typesText(key) && visible(latest.current.state.pending, get().decided).flat.length === 0) return false;
    // Several letters typed in one chunk ("yY") are separate decisions, except in the reason field.
    if (key.name === 'text' && get().mode !== 'reason') {
      let used = false;
      for (const ch of key.text) used = handle({ name: ch === ' ' ? 'space' : ch, text: ch }) || used;
      return used;
    }
    return handle(key);
  }, [get, handle, latest]));

  const local = get();
  const content = useMemo(() => visible(state.pending, local.decided), [state.pending, local.decided]);
  const lines = local.mode === 'details' || (local.mode === 'reason' && local.reasonFrom === 'details')
    ? detailsLines(props, content.flat, local, inner)
    : listLines(props, content, local, inner.height);
  return <ModalFrame theme={theme} width={width} height={height} lines={lines} />;
}

function outcomeLine(local: Local): Line {
  if (!local.outcome) return [];
  return [{ text: local.outcome.text, tone: local.outcome.level === 'info' ? 'ok' : local.outcome.level }];
}

function reasonLines(local: Local): Line[] {
  const n = local.reasonTargets.length;
  return [
    [{ text: `Reject ${n === 1 ? '1 request' : `${n} requests`}. Reason (optional): `, tone: 'warn', bold: true }, ...fieldSpans(local.reason, true)],
    [{ text: 'Enter reject · Esc back', tone: 'muted' }],
  ];
}

function listLines(props: ModalProps, content: ReturnType<typeof visible>, local: Local, rows: number): Line[] {
  const { theme } = props;
  const arrow = ` ${theme.arrow} `;
  const { flat } = content;
  const head: Line[] = [[
    { text: 'Approval queue', bold: true, tone: 'heading' },
    { text: ` ${theme.dot} ${flat.length === 0 ? 'nothing waiting for you' : `${flat.length} waiting for you`}${local.marked.size ? ` ${theme.dot} ${local.marked.size} marked` : ''}`, tone: 'muted' },
  ], []];
  const foot: Line[] = [];
  if (content.elsewhere.length > 0) {
    const who = [...new Set(content.elsewhere.map((r) => r.approverId))].join(', ');
    foot.push([{ text: `${content.elsewhere.length} more waiting on agent approvers (${who}); unanswered, they come here`, tone: 'muted' }]);
  }
  foot.push(outcomeLine(local));
  if (local.mode === 'reason') foot.push(...reasonLines(local));
  else {
    foot.push([{ text: '↑↓ move · Space mark · Enter details · y approve · n reject (marked, else this)', tone: 'muted' }]);
    foot.push([{ text: 'Y/N all · a approve + allow for this session · Esc close', tone: 'muted' }]);
  }
  const body: { line: Line; request?: PendingApproval }[] = [];
  const current = selectedOf(flat, local);
  for (const group of content.groups) {
    const requests = group.requests.filter((r) => !local.decided.has(r.requestId));
    if (requests.length === 0) continue;
    body.push({ line: [{ text: group.chain.join(arrow), tone: 'agent', bold: true }, { text: `  (${requests.length})`, tone: 'muted' }] });
    for (const request of requests) {
      const selected = request === current;
      const mark: Span = { text: local.marked.has(request.requestId) ? '[x] ' : '[ ] ', tone: local.marked.has(request.requestId) ? 'warn' : 'muted' };
      const row: Line = [marker(theme, selected), mark, { text: request.toolName, bold: true }, { text: ` ${requestLabel(request).slice(request.toolName.length + 1)}` }, { text: `  ${theme.dot} ${ruleText(request)}`, tone: 'muted' }, ...sandboxSpans(request, theme.dot)];
      body.push({ line: selectStyle(theme, row, selected), request });
    }
  }
  if (body.length === 0) body.push({ line: [{ text: 'No requests are waiting for you. Esc closes.', tone: 'muted' }] });
  const room = Math.max(1, rows - head.length - foot.length);
  const at = Math.max(0, body.findIndex((b) => b.request !== undefined && b.request === current));
  // Show the group header above the first request when scrolled to the top.
  const { start, end } = listWindow(body.length, at, room);
  return [...head, ...body.slice(start, end).map((b) => b.line), ...Array(Math.max(0, room - (end - start))).fill([]), ...foot];
}

function previewLines(preview: ApprovalPreview | null | undefined, cells: number): Line[] {
  if (!preview) return [[{ text: 'computing the preview…', tone: 'muted' }]];
  return hardWrap(preview.text, cells).map((text): Line => {
    if (preview.kind === 'command') return [{ text, tone: 'code' }];
    if (preview.kind === 'json') return text.startsWith('no preview:') ? [{ text, tone: 'warn' }] : [{ text }];
    if (text.startsWith('+++') || text.startsWith('---')) return [{ text, bold: true }];
    if (text.startsWith('@@')) return [{ text, tone: 'accent' }];
    if (text.startsWith('+')) return [{ text, tone: 'ok' }];
    if (text.startsWith('-')) return [{ text, tone: 'error' }];
    return [{ text }];
  });
}

function detailsLines(props: ModalProps, flat: readonly PendingApproval[], local: Local, inner: { width: number; height: number }): Line[] {
  const { theme, state } = props;
  const request = flat.find((r) => r.requestId === local.detailsId) ?? (local.detailsId ? state.pending[local.detailsId] : undefined);
  if (!request) {
    return [[{ text: 'This request was resolved elsewhere.', tone: 'warn' }], [], [{ text: 'Esc back', tone: 'muted' }]];
  }
  const position = flat.indexOf(request);
  const head: Line[] = [
    [{ text: `Request ${position + 1} of ${flat.length}`, bold: true, tone: 'heading' }, { text: ` ${theme.dot} ${requestLabel(request)}` }],
    [{ text: 'asks     ', tone: 'muted' }, { text: request.participantId, tone: 'agent', bold: true }, { text: ` (${chainOf(request).join(` ${theme.arrow} `)})`, tone: 'muted' }],
    [{ text: 'session  ', tone: 'muted' }, { text: sessionLabel(request.sessionId, theme) }],
    // Wrapped, not cut: the reason may carry a tool's note (an MCP server, tool and annotations).
    ...hardWrap(request.ruleId ? ruleText(request).replace(/^rule /, '') : ruleText(request), Math.max(10, inner.width - 9))
      .map((text, i): Line => [{ text: i === 0 ? 'rule     ' : '         ', tone: 'muted' }, { text }]),
    ...(request.sandboxed === undefined ? [] : [[{ text: 'runs     ', tone: 'muted' }, request.sandboxed
      ? { text: 'in the sandbox (workspace writable, no network unless allowed)' }
      : { text: 'WITHOUT a sandbox: with all of your rights', tone: 'warn', bold: true }] as Line]),
    [{ text: theme.rule.repeat(Math.max(1, inner.width)), tone: 'muted' }],
  ];
  const foot: Line[] = [outcomeLine(local)];
  if (local.mode === 'reason') foot.push(...reasonLines(local));
  else foot.push([{ text: 'y approve · n reject · a allow for session · ↑↓/PgUp/PgDn scroll · Esc back', tone: 'muted' }]);
  const body = previewLines(local.previews[request.requestId], inner.width);
  let room = Math.max(1, inner.height - head.length - foot.length);
  const overflow = body.length > room;
  if (overflow) room = Math.max(1, room - 1);
  const top = Math.min(local.scroll, Math.max(0, body.length - room));
  const shown = body.slice(top, top + room);
  if (overflow) foot.unshift([{ text: `(lines ${top + 1}–${top + shown.length} of ${body.length})`, tone: 'muted' }]);
  return [...head, ...shown, ...Array(Math.max(0, room - shown.length)).fill([]), ...foot];
}

/** ` · sandboxed` / ` · NO SANDBOX` after a request that starts a process (docs/sandbox.md). */
function sandboxSpans(request: PendingApproval, dot: string): Span[] {
  if (request.sandboxed === undefined) return [];
  return request.sandboxed ? [{ text: ` ${dot} sandboxed`, tone: 'muted' }] : [{ text: ` ${dot} NO SANDBOX`, tone: 'warn', bold: true }];
}
