import React, { memo } from 'react';
import type { UiState } from './state/ui-state';
import { awaitsUser, isBusy } from './state/ui-state';
import type { Theme } from './theme';
import type { Span } from './text/line';
import { ansiLine } from './text/ansi';
import { AnsiText } from './text/AnsiText';
import { truncate, cellWidth } from './text/width';
import { formatCost, formatTokens } from './format';
import { workflowProgressText } from './state/workflows';

export interface StatusBarProps {
  readonly state: UiState;
  readonly providerLabel: string;
  readonly demo: boolean;
  readonly width: number;
  readonly spinner: string;
  /** How the approval queue opens (from the keymap), shown on the badge. */
  readonly approvalsKey: string;
  /** How to reach another lane and the session switcher (from the keymap), for the question hint. */
  readonly laneKey: string;
  readonly switcherKey: string;
  readonly theme: Theme;
  /** Where the core runs: `attached` to `legion serve`, or `local` in this process (docs/serve.md#attaching). */
  readonly mode?: 'attached' | 'local';
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
export const StatusBar = memo(function StatusBar({ state, providerLabel, demo, width, spinner, approvalsKey, laneKey, switcherKey, theme, mode }: StatusBarProps) {
  const busy = busyAgents(state);
  const question = questionHint(state, laneKey, switcherKey);
  const pending = Object.keys(state.pending).length;
  const model = state.model && !providerLabel.includes(state.model) ? `${providerLabel} ${state.model}` : providerLabel;
  const spin = spinner ? `${spinner} ` : '';
  const seg = {
    app: { text: 'legion', bold: true } as Span,
    run: { text: `run ${state.runId}${state.resumed ? ' (resumed)' : ''}`, tone: 'muted' } as Span,
    mode: mode ? ({ text: mode, tone: mode === 'attached' ? 'accent' : 'muted', bold: mode === 'attached' } as Span) : null,
    provider: (demo ? { text: 'DEMO', tone: 'warn', bold: true, inverse: !theme.plain } : { text: model }) as Span,
    tokens: { text: `${formatTokens(state.totals.tokens)} tok ${formatCost(state.totals.costUsd, state.totals.costKnown)}` } as Span,
    busy: busy.length > 0 ? ({ text: `${spin}busy: ${busy.join(', ')}`, tone: 'accent' } as Span) : null,
    pending: pending > 0
      ? ({ text: `${pending} approval${pending === 1 ? '' : 's'} pending${approvalsKey ? ` (${approvalsKey})` : ''}`, tone: 'warn', bold: true, inverse: !theme.plain && theme.color } as Span)
      : null,
    question: question ? ({ text: question, tone: 'warn', bold: true } as Span) : null,
    mcp: mcpMark(state),
    // Running workflows (docs/workflows.md#tui): `review-pr 2/4 · $0.31`.
    workflow: ((text) => (text ? ({ text, tone: 'accent' } as Span) : null))(workflowProgressText(state, theme.dot)),
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
