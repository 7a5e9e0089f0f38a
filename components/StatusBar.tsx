import React, { memo } from 'react';
import { Text } from 'ink';
import type { UiState } from './state/ui-state';
import { isBusy } from './state/ui-state';
import type { Theme } from './theme';
import type { Span } from './text/line';
import { lineToAnsi } from './text/ansi';
import { truncate, cellWidth } from './text/width';
import { formatCost, formatTokens } from './format';

export interface StatusBarProps {
  readonly state: UiState;
  readonly providerLabel: string;
  readonly demo: boolean;
  readonly width: number;
  readonly spinner: string;
  /** How the approval queue opens (from the keymap), shown on the badge. */
  readonly approvalsKey: string;
  readonly theme: Theme;
}

/** Participants working right now (any session not idle), in the order they started. */
export function busyAgents(state: UiState): string[] {
  const out: string[] = [];
  for (const id of state.order) {
    const s = state.sessions[id];
    if (s && isBusy(s.status) && !out.includes(s.responderId)) out.push(s.responderId);
  }
  return out;
}

/** One line: run, provider/model (or DEMO), tokens and cost, busy agents, pending approvals. */
export const StatusBar = memo(function StatusBar({ state, providerLabel, demo, width, spinner, approvalsKey, theme }: StatusBarProps) {
  const sep: Span = { text: ` ${theme.dot} `, tone: 'muted' };
  const busy = busyAgents(state);
  const pending = Object.keys(state.pending).length;
  const model = state.model && !providerLabel.includes(state.model) ? `${providerLabel} ${state.model}` : providerLabel;
  const spans: Span[] = [
    { text: 'legion', bold: true },
    sep,
    { text: `run ${state.runId}${state.resumed ? ' (resumed)' : ''}`, tone: 'muted' },
    sep,
    demo ? { text: 'DEMO', tone: 'warn', bold: true, inverse: !theme.plain } : { text: model },
    sep,
    { text: `${formatTokens(state.totals.tokens)} tok ${formatCost(state.totals.costUsd, state.totals.costKnown)}` },
  ];
  if (busy.length > 0) {
    spans.push(sep, { text: `${spinner ? `${spinner} ` : ''}busy: ${busy.join(', ')}`, tone: 'accent' });
  }
  if (pending > 0) {
    spans.push(sep, { text: `${pending} approval${pending === 1 ? '' : 's'} pending${approvalsKey ? ` (${approvalsKey})` : ''}`, tone: 'warn', bold: true, inverse: !theme.plain && theme.color });
  }
  let text = '';
  const fitted: Span[] = [];
  for (const s of spans) {
    const room = width - cellWidth(text);
    if (room <= 0) break;
    const t = truncate(s.text, room);
    fitted.push({ ...s, text: t });
    text += t;
  }
  return <Text>{lineToAnsi(fitted, theme)}</Text>;
});
