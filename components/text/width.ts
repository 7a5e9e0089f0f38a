import stringWidth from 'string-width';

// Printable ASCII only: one cell per character (the common case, measured without segmentation).
const ASCII = /^[\x20-\x7e]*$/;

/** Terminal cells taken by `text` (same measure as Ink, with an ASCII fast path). */
export function cellWidth(text: string): number {
  return ASCII.test(text) ? text.length : stringWidth(text);
}

/** The longest prefix of `text` that fits in `cells`, and the cells it takes. */
export function fitPrefix(text: string, cells: number): { head: string; width: number } {
  if (ASCII.test(text)) {
    const head = text.slice(0, Math.max(0, cells));
    return { head, width: head.length };
  }
  let width = 0;
  let head = '';
  for (const ch of text) {
    const w = stringWidth(ch);
    if (width + w > cells) break;
    head += ch;
    width += w;
  }
  return { head, width };
}

/** `text` cut to `cells` with an ellipsis when it does not fit. */
export function truncate(text: string, cells: number, ellipsis = '…'): string {
  if (cells <= 0) return '';
  if (cellWidth(text) <= cells) return text;
  return fitPrefix(text, Math.max(0, cells - cellWidth(ellipsis))).head + ellipsis;
}
