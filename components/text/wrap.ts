import type { Line, Span } from './line';
import { cellWidth, fitPrefix } from './width';

export interface WrapOptions {
  /** Spans put before the first line (e.g. a list bullet). */
  readonly first?: readonly Span[];
  /** Spans put before every following line (hanging indent). */
  readonly rest?: readonly Span[];
}

const PIECES = /\n|[^\S\n]+|[^\s]+/g;

/**
 * Word-wrap styled text into lines of at most `width` cells. Newlines break lines; words
 * longer than a line are broken hard; spaces at a wrap point are dropped.
 */
export function wrapSpans(spans: readonly Span[], width: number, options: WrapOptions = {}): Line[] {
  const first = options.first ?? [];
  const rest = options.rest ?? [];
  const w = Math.max(1, width);
  const lines: Line[] = [];
  let line: Span[] = [...first];
  let lineWidth = widthOf(first);
  let hasContent = false;
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

  for (const span of spans) {
    PIECES.lastIndex = 0;
    for (const match of span.text.matchAll(PIECES)) {
      const piece = match[0];
      if (piece === '\n') { push(false); continue; }
      const cells = cellWidth(piece);
      if (/^\s/.test(piece)) {
        if (lineWidth + cells <= w) { if (hasContent || !softWrapped) append(span, piece, cells); }
        else if (hasContent) push();
        continue;
      }
      if (lineWidth + cells <= w) { append(span, piece, cells); continue; }
      if (hasContent) push();
      let word = piece;
      while (lineWidth + cellWidth(word) > w) {
        const room = Math.max(1, w - lineWidth);
        const { head, width } = fitPrefix(word, room);
        if (head === '') {
          if (!hasContent && lineWidth > 0) { line = []; lineWidth = 0; continue; } // indent wider than the line
          break;
        }
        append(span, head, width);
        word = word.slice(head.length);
        push();
      }
      if (word !== '') append(span, word, cellWidth(word));
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
