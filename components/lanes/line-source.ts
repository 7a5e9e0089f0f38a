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
  const tail = session.streaming === '' ? [] : tailBlocks(session, ctx);
  return {
    count: n + tail.length,
    lines: (index) => (index < n ? entryLines(session, index, ctx) : tail[index - n]!),
  };
}

// Streamed text only grows within an epoch. The part before its last paragraph break outside
// a code fence is stable: each newly stable paragraph is rendered once and kept as a block;
// only the growing last paragraph is rendered per frame. Cost per frame: that paragraph.
interface TailCache { epoch: number; ctx: LineContext; cut: number; blocks: Line[][] }
const tails = new Map<string, TailCache>();
const MAX_TAILS = 16;

function tailBlocks(session: SessionView, ctx: LineContext): readonly (readonly Line[])[] {
  const text = session.streaming;
  let cache = tails.get(session.id);
  if (!cache || cache.epoch !== session.streamEpoch || cache.ctx.width !== ctx.width || cache.ctx.glyphs !== ctx.glyphs || cache.ctx.highlight !== ctx.highlight || cache.cut > text.length) {
    cache = { epoch: session.streamEpoch, ctx, cut: 0, blocks: [] };
    tails.delete(session.id);
    tails.set(session.id, cache);
    if (tails.size > MAX_TAILS) tails.delete(tails.keys().next().value!);
  }
  const lead = session.entries.length > 0 || cache.blocks.length > 0;
  const cut = stableCut(text, cache.cut);
  if (cut > cache.cut) {
    const lines = markdownLines(sanitize(text.slice(cache.cut, cut)), ctx.width, ctx.glyphs.markdown);
    if (lines.length > 0) cache.blocks.push(lead ? [[], ...lines] : lines);
    cache.cut = cut;
  }
  const rest = sanitize(text.slice(cut));
  const restLines = rest.trim() === '' ? [] : markdownLines(rest, ctx.width, ctx.glyphs.markdown);
  const restLead = session.entries.length > 0 || cache.blocks.length > 0;
  return restLines.length === 0 ? [...cache.blocks] : [...cache.blocks, restLead ? [[], ...restLines] : restLines];
}

/**
 * Index just after the last blank line outside a fenced code block (0 if none), scanning from
 * `from` (a previous cut: a line start outside any fence, after a blank line).
 */
export function stableCut(text: string, from = 0): number {
  let cut = from;
  let inFence = false;
  let lineStart = from;
  let prevBlank = from > 0;
  for (;;) {
    const end = text.indexOf('\n', lineStart);
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
