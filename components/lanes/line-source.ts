import type { Line } from '../text/line';
import { markdownLines } from '../markdown/markdown-lines';
import type { SessionView } from '../state/ui-state';
import { entryLines, type LineContext } from './entry-lines';
import { sanitize } from '../text/ansi';
import { newParagraphTail, paragraphTailLines, type ParagraphTail } from './paragraph-tail';

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
// only the growing last paragraph is rendered per frame, and when it is a plain paragraph only
// its growing source line (paragraph-tail.ts). Cost per frame: that line, else that paragraph.
interface TailCache { id: string; epoch: number; ctx: LineContext; cut: number; blocks: Line[][]; paragraph: ParagraphTail }
// Kept per entries array: a delta keeps the session's entries (only its text grows), a new
// message or notice replaces them (and the cache goes with the old array). Two views of one
// session (two apps, a test's fresh render) never share a cache.
const tails = new WeakMap<readonly unknown[], TailCache>();

function tailBlocks(session: SessionView, ctx: LineContext): readonly (readonly Line[])[] {
  const text = session.streaming;
  let cache = tails.get(session.entries);
  if (!cache || cache.id !== session.id || cache.epoch !== session.streamEpoch || cache.ctx.width !== ctx.width || cache.ctx.glyphs !== ctx.glyphs || cache.ctx.highlight !== ctx.highlight || cache.cut > text.length) {
    cache = { id: session.id, epoch: session.streamEpoch, ctx, cut: 0, blocks: [], paragraph: newParagraphTail() };
    tails.set(session.entries, cache);
  }
  const lead = session.entries.length > 0 || cache.blocks.length > 0;
  const cut = stableCut(text, cache.cut);
  if (cut > cache.cut) {
    const lines = markdownLines(sanitize(text.slice(cache.cut, cut)), ctx.width, ctx.glyphs.markdown);
    if (lines.length > 0) cache.blocks.push(lead ? [[], ...lines] : lines);
    cache.cut = cut;
    cache.paragraph = newParagraphTail();
  }
  const restLines = paragraphTailLines(cache.paragraph, text.slice(cut), ctx.width) ?? restInFull(text.slice(cut), ctx);
  const restLead = session.entries.length > 0 || cache.blocks.length > 0;
  return restLines.length === 0 ? [...cache.blocks] : [...cache.blocks, restLead ? [[], ...restLines] : restLines];
}

function restInFull(raw: string, ctx: LineContext): Line[] {
  const rest = sanitize(raw);
  return rest.trim() === '' ? [] : markdownLines(rest, ctx.width, ctx.glyphs.markdown);
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
