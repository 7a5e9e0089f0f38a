import stringWidth from 'string-width';

// Printable ASCII only: one cell per character (the common case, measured without segmentation).
const ASCII = /^[\x20-\x7e]*$/;

/**
 * Blocks of the symbols the screen is made of (Latin letters with accents, Greek, Cyrillic,
 * punctuation, arrows, box drawing, shapes, dingbats, braille spinners). None of their
 * characters combines with a neighbour, so a text made only of ASCII and such characters that
 * each take one cell takes one cell per character: no grapheme segmentation needed.
 * Combining marks, variation selectors, joiners and surrogates are outside these blocks.
 */
const BLOCKS: readonly (readonly [number, number])[] = [
  [0x00a0, 0x02ff], [0x0370, 0x03ff], [0x0400, 0x0482], [0x2010, 0x2027], [0x2030, 0x205e],
  [0x20a0, 0x20c0], [0x2100, 0x23ff], [0x2500, 0x27bf], [0x2800, 0x28ff], [0x2900, 0x2bff],
];
const BLOCK_END = 0x2c00;
/** Per character code below BLOCK_END: 0 not yet known, 1 one standalone cell, 2 anything else. */
const known = new Uint8Array(BLOCK_END);

function narrowSymbol(code: number): boolean {
  if (code >= BLOCK_END) return false;
  let k = known[code]!;
  if (k === 0) {
    const inBlock = BLOCKS.some(([from, to]) => code >= from && code <= to);
    k = inBlock && stringWidth(String.fromCharCode(code)) === 1 ? 1 : 2;
    known[code] = k;
  }
  return k === 1;
}

/** True when every character of `text` is one cell on its own (printable ASCII or a narrow symbol). */
function oneCellEach(text: string): boolean {
  if (ASCII.test(text)) return true;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 && c <= 0x7e) continue;
    if (!narrowSymbol(c)) return false;
  }
  return true;
}

/** Terminal cells taken by `text` (same measure as Ink, without segmentation for common text). */
export function cellWidth(text: string): number {
  return oneCellEach(text) ? text.length : stringWidth(text);
}

/** The longest prefix of `text` that fits in `cells`, and the cells it takes. */
export function fitPrefix(text: string, cells: number): { head: string; width: number } {
  if (oneCellEach(text)) {
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
