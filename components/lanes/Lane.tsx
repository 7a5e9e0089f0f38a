import React, { memo, useMemo } from 'react';
import { Box } from 'ink';
import type { LaneView, SessionView } from '../state/ui-state';
import { awaitsUser, canType, isBusy } from '../state/ui-state';
import type { Theme } from '../theme';
import type { Line, Span } from '../text/line';
import { ansiLine } from '../text/ansi';
import { AnsiBlock } from '../text/AnsiText';
import { truncate, cellWidth } from '../text/width';
import { formatCost, formatTokens, statusText } from '../format';
import { lineSource } from './line-source';
import { viewport } from './viewport';
import type { LineContext } from './entry-lines';
import { highlightVersion } from '../markdown/highlight';
import { welcomeLines } from './welcome';

export interface LaneProps {
  readonly session: SessionView;
  readonly view: LaneView;
  readonly width: number;
  readonly height: number;
  readonly focused: boolean;
  /** The user's lane: one line naming a delegate at work, or null. */
  readonly activity: string | null;
  /** Current spinner frame ('' when none). */
  readonly spinner: string;
  readonly theme: Theme;
  /** `highlightVersion()`: a new value re-renders the lane with highlighted code. */
  readonly highlight: number;
  /** Paragraphs shown while the session has no message yet (the home lane's welcome). */
  readonly welcome?: readonly string[] | null;
}

/** Lines of transcript a lane of `height` rows shows (header and activity row excluded). */
export function laneBodyHeight(height: number, hasActivity: boolean): number {
  return Math.max(0, height - 1 - (hasActivity ? 1 : 0));
}

/** Context for wrapping a lane's lines; stable per (width, expanded, theme) so caches hit. */
const contexts = new Map<string, LineContext>();
export function lineContext(width: number, expanded: boolean, theme: Theme): LineContext {
  const highlight = highlightVersion();
  const key = `${width}:${expanded}:${theme.plain}:${highlight}`;
  let ctx = contexts.get(key);
  if (!ctx) contexts.set(key, (ctx = { width: Math.max(1, width), expanded, glyphs: theme.transcript, highlight }));
  return ctx;
}

/** One session: a header (`initiator → responder · name`, status, tokens) over its visible lines. */
export const Lane = memo(function Lane(props: LaneProps) {
  const { session, view, width, height, focused, activity, spinner, theme } = props;
  const bodyHeight = laneBodyHeight(height, activity !== null);
  const ctx = lineContext(width, view.expanded, theme);
  const empty = session.entries.length === 0 && session.streaming === '';
  const welcome = empty ? props.welcome ?? null : null;
  const shown = useMemo(
    () => (welcome ? welcomeViewport(welcome, ctx.width, bodyHeight) : viewport(lineSource(session, ctx), view.scroll, bodyHeight)),
    [session, ctx, view.scroll, bodyHeight, welcome],
  );
  // Every row of the lane as one AnsiBlock: one element and one Ink text node per lane.
  const texts: string[] = [ansiLine(headerLine(props, shown.below), theme).text];
  for (let i = 0; i < bodyHeight; i++) {
    const line = shown.lines[i];
    texts.push(line ? ansiLine(line, theme).text : '');
  }
  if (activity !== null) texts.push(ansiLine([{ text: truncate(activity, width), tone: 'agent', dim: !spinner }], theme).text);
  return (
    <Box flexDirection="column" width={width} height={height}>
      <AnsiBlock texts={texts} box={width} />
    </Box>
  );
});

/** The welcome's lines from the top, cut to the lane (the viewport's shape, nothing below). */
function welcomeViewport(paragraphs: readonly string[], width: number, height: number): { lines: readonly Line[]; ids: readonly string[]; above: boolean; below: boolean } {
  const lines = welcomeLines(paragraphs, width).slice(0, height);
  return { lines, ids: lines.map((_, i) => `welcome-${i}`), above: false, below: false };
}


/**
 * `▶ initiator → responder · name  status ──── read-only · tokens`. When it does not fit, the
 * right part goes first (tokens, then the scroll hint, then "read-only"), then the status is
 * cut, then the title.
 */
function headerLine(props: LaneProps, scrolled: boolean): Line {
  const { session, width, focused, spinner, theme } = props;
  // A question to the user is nobody working: no spinner, and the lane takes typing while it is open.
  const asking = awaitsUser(session);
  const busy = isBusy(session.status) && !asking;
  const mark = focused ? theme.focusMark : ' ';
  const title = `${mark} ${session.initiatorId} ${theme.arrow} ${session.responderId} ${theme.dot} ${session.name}`;
  let status = asking ? 'waiting for your answer' : `${busy && spinner ? `${spinner} ` : ''}${statusText(session.status, session.detail)}`;
  const parts: string[] = [];
  if (session.isolated) parts.push('worktree');
  if (!canType(session)) parts.push('read-only');
  if (scrolled) parts.push(theme.plain ? 'scrolled, End follows' : '↓ End follows');
  if (session.context && session.context.window > 0) parts.push(`ctx ${Math.min(999, Math.round((session.context.tokens / session.context.window) * 100))}%`);
  if (session.tokens > 0) parts.push(`${formatTokens(session.tokens)} tok ${formatCost(session.costUsd, session.costKnown)}`);
  let right = parts.join(` ${theme.dot} `);
  // title + 2 spaces + status + at least " ─ " + right
  const room = (): number => width - cellWidth(title) - 2 - cellWidth(status) - 3;
  while (parts.length > 0 && room() < cellWidth(right)) {
    parts.pop(); // tokens go first, "read-only" last
    right = parts.join(` ${theme.dot} `);
  }
  if (room() < cellWidth(right)) right = '';
  const statusRoom = width - cellWidth(title) - 2 - 1;
  if (cellWidth(status) > statusRoom) status = truncate(status, Math.max(0, statusRoom));
  const left = truncate(title, Math.max(4, width - 2 - cellWidth(status) - 1));
  const fill = Math.max(1, width - cellWidth(left) - 2 - cellWidth(status) - cellWidth(right));
  const statusTone = session.status === 'error' ? 'error' : session.status === 'waiting-approval' || asking ? 'warn' : busy ? 'accent' : 'muted';
  const spans: Span[] = [
    { text: left, tone: focused ? 'accent' : undefined, bold: focused },
    { text: '  ' },
    { text: status, tone: statusTone },
    { text: theme.plain || fill < 3 ? ' '.repeat(fill) : ` ${theme.rule.repeat(fill - 2)} `, tone: 'muted' },
  ];
  if (right) spans.push({ text: right, tone: 'muted' });
  const all = spans.map((x) => x.text).join('');
  return cellWidth(all) > width ? [{ text: truncate(all, width), bold: focused }] : spans;
}
