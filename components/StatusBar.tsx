import React, { memo, useRef } from 'react';
import type { UiState } from './state/ui-state';
import { awaitsUser, isBusy } from './state/ui-state';
import type { Theme } from './theme';
import type { Span } from './text/line';
import { ansiLine } from './text/ansi';
import { AnsiText } from './text/AnsiText';
import { truncate, cellWidth } from './text/width';
import { formatCost, formatTokens } from './format';
import { workflowProgressText } from './state/workflows';

/**
 * What the status bar shows of the UI state, as plain values (`statusFacts`). A streamed delta
 * changes none of them, so `useStatusFacts` keeps the same object and the memoised bar is not
 * rendered again for it (only the streaming lane is).
 */
export interface StatusFacts {
  readonly runId: string;
  readonly resumed: boolean;
  readonly model: UiState['model'];
  readonly tokens: number;
  readonly costUsd: number;
  readonly costKnown: boolean;
  readonly busy: readonly string[];
  readonly question: string | null;
  readonly pending: number;
  readonly mcp: Span | null;
  readonly workflow: string | null;
}

export function statusFacts(state: UiState, laneKey: string, switcherKey: string, dot: string): StatusFacts {
  return {
    runId: state.runId, resumed: state.resumed, model: state.model,
    tokens: state.totals.tokens, costUsd: state.totals.costUsd, costKnown: state.totals.costKnown,
    busy: busyAgents(state), question: questionHint(state, laneKey, switcherKey), pending: Object.keys(state.pending).length,
    mcp: mcpMark(state), workflow: workflowProgressText(state, dot),
  };
}

export function sameStatusFacts(a: StatusFacts, b: StatusFacts): boolean {
  return a.runId === b.runId && a.resumed === b.resumed && a.model === b.model && a.tokens === b.tokens && a.costUsd === b.costUsd
    && a.costKnown === b.costKnown && a.question === b.question && a.pending === b.pending && a.workflow === b.workflow
    && a.busy.length === b.busy.length && a.busy.every((id, i) => id === b.busy[i])
    && (a.mcp === b.mcp || (a.mcp !== null && b.mcp !== null && a.mcp.text === b.mcp.text));
}

/** The status facts of `state`, the same object as long as they are equal (so the bar's memo holds). */
export function useStatusFacts(state: UiState, laneKey: string, switcherKey: string, dot: string): StatusFacts {
  const kept = useRef<StatusFacts | null>(null);
  const next = statusFacts(state, laneKey, switcherKey, dot);
  if (kept.current === null || !sameStatusFacts(kept.current, next)) kept.current = next;
  return kept.current;
}

export interface StatusBarProps {
  readonly facts: StatusFacts;
  readonly providerLabel: string;
  readonly demo: boolean;
  readonly width: number;
  readonly spinner: string;
  /** How the approval queue opens (from the keymap), shown on the badge. */
  readonly approvalsKey: string;
  readonly theme: Theme;
  /** Where the core runs: `attached` to `legion serve`, or `local` in this process (docs/serve.md#attaching). */
  readonly mode?: 'attached' | 'local' | 'reconnecting' | 'disconnected';
}

/** Participants working right now (any session not idle, questions to the user aside), in the order they started. */
export function busyAgents(state: UiState): string[] {
  const out: string[] = [];
  for (const id of state.order) {
    const s = state.sessions[id];
    if (s && isBusy(s.status) && !awaitsUser(s) && !out.includes(s.responderId)) out.push(s.responderId);
  }
  return out;
}

/**
 * Questions of agents waiting for the user's answer outside the focused lane, as a hint:
 * "scribe asks you (Tab)", "2 questions for you (Tab)"; the switcher's key when none of them
 * has a lane. Null when there is none.
 */
export function questionHint(state: UiState, laneKey: string, switcherKey: string): string | null {
  const focused = state.lanes[state.focus];
  const asking = state.order.filter((id) => id !== focused && state.sessions[id] !== undefined && awaitsUser(state.sessions[id]!));
  if (asking.length === 0) return null;
  const key = asking.some((id) => state.lanes.includes(id)) ? laneKey : switcherKey;
  const what = asking.length === 1 ? `${state.sessions[asking[0]!]!.initiatorId} asks you` : `${asking.length} questions for you`;
  return key ? `${what} (${key})` : what;
}

/** "mcp ✗ github" (or "mcp ✗ 2") while MCP servers are failed; null when none is. */
export function mcpMark(state: UiState): Span | null {
  const failed = Object.entries(state.mcp ?? {}).filter(([, s]) => s.state === 'failed').map(([name]) => name);
  if (failed.length === 0) return null;
  return { text: `mcp ✗ ${failed.length === 1 ? failed[0]! : failed.length}`, tone: 'error' };
}

/**
 * One line: run, provider/model (or DEMO), tokens and cost, busy agents, questions waiting for
 * you, pending approvals. When it does not fit, the run id goes first, then the busy list
 * shrinks to a count, then the provider is cut; the question hint and approvals badge always show.
 */
/** Attached and connected: accent; the connection down (docs/serve.md#when-the-server-goes-away): warn while it is tried again, error once given up. */
const MODE_TONE = { attached: 'accent', local: 'muted', reconnecting: 'warn', disconnected: 'error' } as const;

export const StatusBar = memo(function StatusBar({ facts, providerLabel, demo, width, spinner, approvalsKey, theme, mode }: StatusBarProps) {
  const { busy, question, pending } = facts;
  const model = facts.model && !providerLabel.includes(facts.model) ? `${providerLabel} ${facts.model}` : providerLabel;
  const spin = spinner ? `${spinner} ` : '';
  const seg = {
    app: { text: 'legion', bold: true } as Span,
    run: { text: `run ${facts.runId}${facts.resumed ? ' (resumed)' : ''}`, tone: 'muted' } as Span,
    mode: mode ? ({ text: mode, tone: MODE_TONE[mode], bold: mode !== 'local' } as Span) : null,
    provider: (demo ? { text: 'DEMO', tone: 'warn', bold: true, inverse: !theme.plain } : { text: model }) as Span,
    tokens: { text: `${formatTokens(facts.tokens)} tok ${formatCost(facts.costUsd, facts.costKnown)}` } as Span,
    busy: busy.length > 0 ? ({ text: `${spin}busy: ${busy.join(', ')}`, tone: 'accent' } as Span) : null,
    pending: pending > 0
      ? ({ text: `${pending} approval${pending === 1 ? '' : 's'} pending${approvalsKey ? ` (${approvalsKey})` : ''}`, tone: 'warn', bold: true, inverse: !theme.plain && theme.color } as Span)
      : null,
    question: question ? ({ text: question, tone: 'warn', bold: true } as Span) : null,
    mcp: facts.mcp,
    // Running workflows (docs/workflows.md#tui): `review-pr 2/4 · $0.31`.
    workflow: facts.workflow ? ({ text: facts.workflow, tone: 'accent' } as Span) : null,
  };
  const sep: Span = { text: ` ${theme.dot} `, tone: 'muted' };
  const build = (): Span[] => {
    const parts = [seg.app, seg.run, seg.mode, seg.provider, seg.tokens, seg.workflow, seg.busy, seg.mcp, seg.question, seg.pending].filter((p): p is Span => p !== null && p.text !== '');
    return parts.flatMap((p, i) => (i === 0 ? [p] : [sep, p]));
  };
  const size = (): number => cellWidth(build().map((s) => s.text).join(''));
  if (size() > width) seg.run = { ...seg.run, text: '' };
  if (size() > width && seg.mode?.text === 'local') seg.mode = null;
  if (size() > width && seg.busy) seg.busy = { ...seg.busy, text: `${spin}busy: ${busy.length}` };
  if (size() > width) {
    const over = size() - width;
    seg.provider = { ...seg.provider, text: truncate(seg.provider.text, Math.max(1, cellWidth(seg.provider.text) - over)) };
  }
  let used = 0;
  const fitted: Span[] = [];
  for (const s of build()) {
    const t = truncate(s.text, width - used);
    if (t === '') break;
    fitted.push({ ...s, text: t });
    used += cellWidth(t);
  }
  const { text, width: cells } = ansiLine(fitted, theme);
  return <AnsiText text={text} width={cells} />;
});
