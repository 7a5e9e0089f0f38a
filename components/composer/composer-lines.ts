import type { Draft } from '../state/ui-state';
import type { Line, Span } from '../text/line';
import { fitPrefix } from '../text/width';

export interface ComposerView {
  readonly lines: readonly Line[];
  /** All rows the draft takes (the view may show fewer). */
  readonly totalRows: number;
}

/**
 * The composer's rows: the draft hard-wrapped to `width` after the prompt, the cursor drawn as
 * an inverse cell, at most `maxRows` rows kept around the cursor.
 */
export function composerLines(d: Draft, width: number, maxRows: number, prompt: string, showCursor: boolean): ComposerView {
  const room = Math.max(1, width - prompt.length);
  const rows: { text: string; start: number }[] = [];
  let offset = 0;
  for (const logical of d.text.split('\n')) {
    let rest = logical;
    let start = offset;
    do {
      const { head } = fitPrefix(rest, room);
      const take = head === '' && rest !== '' ? [...rest][0]! : head;
      rows.push({ text: take, start });
      start += take.length;
      rest = rest.slice(take.length);
    } while (rest !== '');
    offset += logical.length + 1;
  }
  // The cursor is on the last row starting at or before it (the end of a soft-wrapped row is
  // the start of the next one; the end of a logical line stays on its row).
  let cursorRow = 0;
  for (let i = 0; i < rows.length; i++) if (rows[i]!.start <= d.cursor) cursorRow = i;
  const first = Math.max(0, Math.min(cursorRow - maxRows + 1, rows.length - maxRows));
  const visible = rows.slice(first, first + maxRows);
  const lines = visible.map((r, i): Line => {
    const lead: Span = { text: first + i === 0 ? prompt : ' '.repeat(prompt.length), tone: 'user', bold: true };
    const text = r.text;
    if (!showCursor || first + i !== cursorRow) return [lead, { text }];
    const col = d.cursor - r.start;
    const at = [...text.slice(col)][0] ?? ' ';
    return [lead, { text: text.slice(0, col) }, { text: at, inverse: true }, { text: text.slice(col + at.length) }];
  });
  return { lines, totalRows: rows.length };
}
