import type { Line, Span } from './line';
import { cellWidth, fitPrefix } from './width';

export interface WrapOptions {
  /** Spans put before the first line (e.g. a list bullet). */
  readonly first?: readonly Span[];
  /** Spans put before every following line (hanging indent). */
  readonly rest?: readonly Span[];
  /**
   * A line wrapped before (non-empty, at most `width`): wrapping goes on after its spans, and
   * the result is what wrapping its spans followed by `spans` gives (greedy wrapping puts the
   * words of a line that fits on that line), without tokenizing it again. Not with `first`.
   */
  readonly after?: Line;
}

const PIECES = /\n|[^\S\n]+|[^\s]+/g;

/** A run of text with one style, part of a word, a space or a line break. */
interface Piece { readonly span: Span; readonly text: string }
type Token = { kind: 'space'; piece: Piece } | { kind: 'break' } | { kind: 'word'; pieces: Piece[]; width: number };

/** Words may span several styles (`(**Ctrl+Y**).` is one word): they break only at spaces. */
function tokens(spans: readonly Span[]): Token[] {
  const out: Token[] = [];
  let word: Extract<Token, { kind: 'word' }> | null = null;
  for (const span of spans) {
    for (const match of span.text.matchAll(PIECES)) {
      const text = match[0];
      if (text === '\n') { word = null; out.push({ kind: 'break' }); continue; }
      if (/^\s/.test(text)) { word = null; out.push({ kind: 'space', piece: { span, text } }); continue; }
      if (!word) out.push((word = { kind: 'word', pieces: [], width: 0 }));
      word.pieces.push({ span, text });
      word.width += cellWidth(text);
    }
  }
  return out;
}

/**
 * Word-wrap styled text into lines of at most `width` cells. Newlines break lines; words
 * longer than a line are broken hard; spaces at a wrap point are dropped.
 */
export function wrapSpans(spans: readonly Span[], width: number, options: WrapOptions = {}): Line[] {
  const first = options.first ?? [];
  const rest = options.rest ?? [];
  const w = Math.max(1, width);
  const lines: Line[] = [];
  const after = options.after !== undefined && options.after.length > 0 ? options.after : null;
  let line: Span[] = after ? [...after] : [...first];
  let lineWidth = widthOf(after ?? first);
  let hasContent = after !== null;
  // True right after a soft wrap: spaces there are dropped; after a newline they are kept.
  let softWrapped = false;

  const push = (soft = true): void => {
    lines.push(line);
    line = [...rest];
    lineWidth = widthOf(rest);
    hasContent = false;
    softWrapped = soft;
  };
  const append = (span: Span, text: string, cells: number): void => {
    const last = line[line.length - 1];
    if (last && hasContent && sameStyle(last, span)) line[line.length - 1] = { ...last, text: last.text + text };
    else line.push(text === span.text ? span : { ...span, text });
    lineWidth += cells;
    hasContent = true;
  };

  for (const token of tokens(spans)) {
    if (token.kind === 'break') { push(false); continue; }
    if (token.kind === 'space') {
      const cells = cellWidth(token.piece.text);
      if (lineWidth + cells <= w) { if (hasContent || !softWrapped) append(token.piece.span, token.piece.text, cells); }
      else if (hasContent) push();
      continue;
    }
    if (lineWidth + token.width <= w) {
      for (const p of token.pieces) append(p.span, p.text, cellWidth(p.text));
      continue;
    }
    if (hasContent) push();
    if (lineWidth + token.width <= w) {
      for (const p of token.pieces) append(p.span, p.text, cellWidth(p.text));
      continue;
    }
    // Longer than a line: break it hard, piece by piece.
    for (const p of token.pieces) {
      let text = p.text;
      while (text !== '') {
        const room = w - lineWidth;
        if (cellWidth(text) <= room) { append(p.span, text, cellWidth(text)); break; }
        const { head, width: headWidth } = fitPrefix(text, room);
        if (head === '') {
          if (hasContent) { push(); continue; }
          if (lineWidth > 0) { line = []; lineWidth = 0; continue; } // the indent leaves no room: drop it
          const ch = [...text][0]!; // a wide character in a one-cell line
          append(p.span, ch, cellWidth(ch));
          text = text.slice(ch.length);
          continue;
        }
        append(p.span, head, headWidth);
        text = text.slice(head.length);
        if (text !== '') push();
      }
    }
  }
  if (hasContent || lines.length === 0 || !softWrapped) lines.push(line);
  return lines;
}

/** Hard-wrap one unstyled text (e.g. a code line) without word breaking. */
export function hardWrap(text: string, width: number, style: Omit<Span, 'text'> = {}): Line[] {
  const w = Math.max(1, width);
  if (cellWidth(text) <= w) return [[{ ...style, text }]];
  const out: Line[] = [];
  let left = text;
  while (left !== '') {
    const { head } = fitPrefix(left, w);
    const take = head === '' ? [...left][0]! : head;
    out.push([{ ...style, text: take }]);
    left = left.slice(take.length);
  }
  return out;
}

export function widthOf(spans: readonly Span[]): number {
  let n = 0;
  for (const s of spans) n += cellWidth(s.text);
  return n;
}

function sameStyle(a: Span, b: Span): boolean {
  return a.tone === b.tone && a.bold === b.bold && a.italic === b.italic && a.underline === b.underline
    && a.dim === b.dim && a.inverse === b.inverse && a.strike === b.strike;
}
