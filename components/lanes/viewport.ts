import type { Line } from '../text/line';
import { FOLLOW, type ScrollPos } from '../state/ui-state';
import type { LineSource } from './line-source';

export interface Viewport {
  /** At most `height` lines, top to bottom. */
  readonly lines: readonly Line[];
  /** Where each line is in the transcript (`block:line`): the same line keeps its id while the view moves. */
  readonly ids: readonly string[];
  /** Lines exist above the first one shown. */
  readonly above: boolean;
  /** Lines exist below the last one shown (the view is scrolled back). */
  readonly below: boolean;
}

interface Pos { readonly entry: number; readonly line: number }

/**
 * The lines visible for `scroll`. Following: walk back from the end until the lane is full.
 * Anchored: walk forward from the anchor; if the end comes first, show the bottom instead.
 * Either way only the blocks on screen are visited.
 */
export function viewport(source: LineSource, scroll: ScrollPos, height: number): Viewport {
  if (height <= 0) return { lines: [], ids: [], above: false, below: false };
  if (scroll.kind === 'anchor') {
    const forward = collectForward(source, clampPos(source, scroll), height + 1, true);
    if (forward.lines.length > height) {
      return { lines: forward.lines.slice(0, height), ids: forward.ids.slice(0, height), above: scroll.entry > 0 || scroll.line > 0, below: true };
    }
  }
  const back = collectBackward(source, source.count, height);
  return { lines: back.lines, ids: back.ids, above: back.above, below: false };
}

/** Move the view `delta` lines (negative: up). Reaching the bottom resumes following. */
export function scrollBy(source: LineSource, scroll: ScrollPos, height: number, delta: number): ScrollPos {
  const top = topOf(source, scroll, height);
  if (top === null) return FOLLOW; // everything fits
  const moved = delta < 0 ? moveUp(source, top, -delta) : moveDown(source, top, delta);
  const below = collectForward(source, moved, height + 1);
  if (below.lines.length <= height) return FOLLOW;
  return { kind: 'anchor', entry: moved.entry, line: moved.line };
}

/** The first line of the transcript, or following when everything fits. */
export function scrollHome(source: LineSource, height: number): ScrollPos {
  const first = collectForward(source, { entry: 0, line: 0 }, height + 1);
  return first.lines.length <= height ? FOLLOW : { kind: 'anchor', entry: 0, line: 0 };
}

/** Position of the top visible line, or null when the whole transcript fits. */
function topOf(source: LineSource, scroll: ScrollPos, height: number): Pos | null {
  if (scroll.kind === 'anchor') {
    const pos = clampPos(source, scroll);
    if (collectForward(source, pos, height + 1).lines.length > height) return pos;
  }
  let need = height;
  for (let i = source.count - 1; i >= 0; i--) {
    const n = source.lines(i).length;
    if (n >= need) return { entry: i, line: n - need };
    need -= n;
  }
  return null;
}

function moveUp(source: LineSource, from: Pos, by: number): Pos {
  let { entry, line } = from;
  let left = by;
  while (left > 0) {
    if (line >= left) return { entry, line: line - left };
    left -= line;
    if (entry === 0) return { entry: 0, line: 0 };
    entry -= 1;
    line = source.lines(entry).length;
  }
  return { entry, line };
}

function moveDown(source: LineSource, from: Pos, by: number): Pos {
  let { entry, line } = from;
  let left = by;
  while (entry < source.count) {
    const n = source.lines(entry).length;
    if (line + left < n) return { entry, line: line + left };
    left -= n - line;
    entry += 1;
    line = 0;
  }
  return { entry: source.count, line: 0 };
}

function clampPos(source: LineSource, pos: Pos): Pos {
  if (pos.entry >= source.count) return { entry: source.count, line: 0 };
  const n = source.lines(pos.entry).length;
  return pos.line < n ? { entry: pos.entry, line: pos.line } : { entry: pos.entry + 1, line: 0 };
}

function collectForward(source: LineSource, from: Pos, max: number, withIds = false): { lines: Line[]; ids: string[] } {
  const lines: Line[] = [];
  const ids: string[] = [];
  let line = from.line;
  for (let i = from.entry; i < source.count && lines.length < max; i++) {
    const block = source.lines(i);
    for (let j = line; j < block.length && lines.length < max; j++) {
      lines.push(block[j]!);
      if (withIds) ids.push(`${i}:${j}`);
    }
    line = 0;
  }
  return { lines, ids };
}

/** The last `height` lines before block `end` (walking back only as far as they reach), and whether more exist above. */
function collectBackward(source: LineSource, end: number, height: number): { lines: Line[]; ids: string[]; above: boolean } {
  const indices: number[] = [];
  const blocks: (readonly Line[])[] = [];
  let total = 0;
  let i = end - 1;
  for (; i >= 0 && total < height; i--) {
    const block = source.lines(i);
    if (block.length === 0) continue;
    indices.push(i);
    blocks.push(block);
    total += block.length;
  }
  // More above: the first block is cut, or a block with lines comes before it.
  let above = total > height;
  for (; !above && i >= 0; i--) if (source.lines(i).length > 0) above = true;
  const lines: Line[] = [];
  const ids: string[] = [];
  let skip = Math.max(0, total - height);
  for (let c = blocks.length - 1; c >= 0; c--) {
    const b = indices[c]!;
    const block = blocks[c]!;
    for (let j = skip; j < block.length; j++) {
      lines.push(block[j]!);
      ids.push(`${b}:${j}`);
    }
    skip = 0;
  }
  return { lines, ids, above };
}
