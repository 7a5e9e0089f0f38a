import { matchRanges, queryPattern, type TranscriptLine } from '../../src/runtime/core-api';
import type { Theme } from '../theme';
import type { Line, Span, Tone } from '../text/line';
import { hardWrap } from './switcher-kit';

/**
 * Lines of the history browser (pure). Search hits are drawn inverse (and in the warn colour
 * with colour on), so they stand out with and without colour.
 */

/** `text` as spans with the query's matches highlighted. */
export function highlighted(text: string, query: string, base: Omit<Span, 'text'> = {}): Span[] {
  const ranges = matchRanges(text, queryPattern(query));
  if (ranges.length === 0) return [{ ...base, text }];
  const out: Span[] = [];
  let from = 0;
  for (const [a, b] of ranges) {
    if (a > from) out.push({ ...base, text: text.slice(from, a) });
    out.push({ ...base, text: text.slice(a, b), inverse: true, tone: 'warn', bold: true });
    from = b;
  }
  if (from < text.length) out.push({ ...base, text: text.slice(from) });
  return out;
}

const TONE: Readonly<Record<TranscriptLine['kind'], Tone | undefined>> = {
  header: 'heading', speaker: 'agent', text: undefined, tool: 'muted', result: 'muted', blank: undefined, mark: 'warn',
};

export interface TranscriptRows {
  readonly rows: readonly Line[];
  /** Row index where each transcript line starts. */
  readonly lineStart: readonly number[];
}

/** A transcript wrapped to `width`, hits of `query` highlighted. */
export function transcriptRows(lines: readonly TranscriptLine[], width: number, query: string, theme: Theme): TranscriptRows {
  const rows: Line[] = [];
  const lineStart: number[] = [];
  for (const line of lines) {
    lineStart.push(rows.length);
    const text = theme.plain ? line.text.replace(/⚙/g, 'tool:').replace(/↳/g, '->').replace(/→/g, '->').replace(/·/g, '-') : line.text;
    const tone = line.kind === 'speaker' && text.startsWith('user ') ? 'user' : TONE[line.kind];
    for (const piece of hardWrap(text, width)) {
      rows.push(piece === '' ? [] : highlighted(piece, query, { ...(tone ? { tone } : {}), ...(line.kind === 'header' || line.kind === 'speaker' ? { bold: true } : {}) }));
    }
  }
  return { rows, lineStart };
}
