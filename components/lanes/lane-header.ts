/**
 * A lane's header row: `▶ initiator → responder · name  status ──── read-only · tokens`.
 *
 * `laneHeader` keeps the Line it built for the same facts (the same object each time), so a
 * streamed frame, which changes the session's text but none of the header's facts, neither
 * builds the header again (its widths: `→`, `·` and `─` make `string-width` segment graphemes)
 * nor styles it (`ansiLine` caches by Line object): the header is built once per spinner frame
 * or status change (docs/streaming.md#the-streamed-tail-in-a-lane).
 */
import type { SessionView } from '../state/ui-state';
import { awaitsUser, canType, isBusy } from '../state/ui-state';
import type { Theme } from '../theme';
import type { Line, Span } from '../text/line';
import { truncate, cellWidth } from '../text/width';
import { formatCost, formatTokens, statusText } from '../format';

/** What the header shows: every input of `buildHeader`, nothing else. */
export interface HeaderFacts {
  readonly session: SessionView;
  readonly width: number;
  readonly focused: boolean;
  /** Current spinner frame ('' when none). */
  readonly spinner: string;
  readonly theme: Theme;
  /** Lines below the viewport (the lane is scrolled up). */
  readonly scrolled: boolean;
}

/** Headers kept per theme: a few lanes × spinner frames. */
const KEEP = 64;
const kept = new WeakMap<Theme, Map<string, Line>>();
let built = 0;

/** Headers built (not found in the cache) since the process started: for tests of the caching. */
export function headersBuiltSoFar(): number {
  return built;
}

/** The header Line for these facts: the same object as last time when they are the same. */
export function laneHeader(facts: HeaderFacts): Line {
  const { session, width, focused, spinner, theme, scrolled } = facts;
  // Every session field buildHeader reads, and what it derives from the session.
  const key = JSON.stringify([
    width, focused, spinner, scrolled, session.initiatorId, session.responderId, session.name, session.status,
    session.detail ?? null, awaitsUser(session), canType(session), session.isolated ?? false,
    session.context?.tokens ?? null, session.context?.window ?? null, session.tokens, session.costUsd, session.costKnown,
  ]);
  let lines = kept.get(theme);
  if (!lines) kept.set(theme, (lines = new Map()));
  let line = lines.get(key);
  if (line === undefined) {
    line = buildHeader(facts);
    built += 1;
    if (lines.size >= KEEP) lines.delete(lines.keys().next().value!);
  } else {
    lines.delete(key); // most recently used last
  }
  lines.set(key, line);
  return line;
}

/**
 * The header built from its facts. When it does not fit, the right part goes first (tokens, then
 * the scroll hint, then "read-only"), then the status is cut, then the title.
 */
export function buildHeader({ session, width, focused, spinner, theme, scrolled }: HeaderFacts): Line {
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
