import type { Line } from '../text/line';
import { markdownLines } from '../markdown/markdown-lines';
import type { SessionView } from '../state/ui-state';
import { entryLines, type LineContext } from './entry-lines';
import { sanitize } from '../text/ansi';

/**
 * A session's transcript as numbered blocks of lines: entries first, then (when present)
 * the streamed tail as one more block. Lines are produced on demand, so the cost of showing
 * a lane depends on the lines visited, never on the length of the session.
 */
export interface LineSource {
  readonly count: number;
  lines(index: number): readonly Line[];
}

export function lineSource(session: SessionView, ctx: LineContext): LineSource {
  const n = session.entries.length;
  const hasTail = session.streaming !== '';
  return {
    count: n + (hasTail ? 1 : 0),
    lines: (index) => (index < n ? entryLines(session, index, ctx) : tailLines(session, ctx)),
  };
}

// Streamed text grows by small deltas: the part before its last paragraph break outside a
// code fence is stable and rendered once; only the tail is re-rendered per frame.
interface TailCache { stable: string; width: number; glyphs: object; lines: Line[] }
const tails = new Map<string, TailCache>();
const MAX_TAILS = 16;

function tailLines(session: SessionView, ctx: LineContext): readonly Line[] {
  const text = sanitize(session.streaming);
  const cut = stableCut(text);
  const stable = text.slice(0, cut);
  let cache = tails.get(session.id);
  if (!cache || cache.stable !== stable || cache.width !== ctx.width || cache.glyphs !== ctx.glyphs) {
    cache = { stable, width: ctx.width, glyphs: ctx.glyphs, lines: stable === '' ? [] : markdownLines(stable, ctx.width, ctx.glyphs.markdown) };
    tails.delete(session.id);
    tails.set(session.id, cache);
    if (tails.size > MAX_TAILS) tails.delete(tails.keys().next().value!);
  }
  const rest = text.slice(cut);
  const restLines = rest.trim() === '' ? [] : markdownLines(rest, ctx.width, ctx.glyphs.markdown);
  const lead: Line[] = session.entries.length > 0 ? [[]] : [];
  if (cache.lines.length > 0 && restLines.length > 0) return [...lead, ...cache.lines, [], ...restLines];
  return [...lead, ...cache.lines, ...restLines];
}

/** Index just after the last blank line that is outside a fenced code block (0 if none). */
export function stableCut(text: string): number {
  let cut = 0;
  let inFence = false;
  let lineStart = 0;
  let prevBlank = false;
  while (lineStart <= text.length) {
    let end = text.indexOf('\n', lineStart);
    if (end === -1) break; // the last line is still growing
    const line = text.slice(lineStart, end);
    if (/^\s{0,3}(```|~~~)/.test(line)) inFence = !inFence;
    const blank = line.trim() === '';
    if (blank && !inFence && !prevBlank && lineStart > 0) cut = end + 1;
    prevBlank = blank;
    lineStart = end + 1;
  }
  return cut;
}
