/** `2026-11-21T19:30:00.123Z` → `2026-11-21 19:30:00` (UTC, as stored); anything else as is. */
export function formatStamp(at: string): string {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}/.test(at) ? at.slice(0, 19).replace('T', ' ') : at;
}

/** Shorten to `max` characters on one line, with `…` when cut. */
export function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? line.slice(0, max - 1) + '…' : line;
}

/**
 * Plain-text table: a header row and rows of cells, columns padded to their widest cell
 * (columns listed in `right` are right-aligned), two spaces apart, no trailing spaces.
 */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[], right: readonly number[] = []): string {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => [...(r[c] ?? '')].length)));
  return all
    .map((r) => r.map((cell, c) => {
      const pad = ' '.repeat(widths[c]! - [...cell].length);
      return right.includes(c) ? pad + cell : cell + pad;
    }).join('  ').trimEnd())
    .join('\n') + '\n';
}
