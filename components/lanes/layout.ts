/** Where one lane goes on screen: a cell of the lane grid. */
export interface LaneCell {
  readonly index: number;
  readonly width: number;
  readonly height: number;
}

export interface LaneRow {
  readonly height: number;
  readonly cells: readonly LaneCell[];
}

/** Narrowest a lane may be when lanes sit side by side (80 columns hold two, 160 hold four). */
export const MIN_LANE_WIDTH = 39;

/**
 * Arrange `count` lanes in `width` × `height`: as many columns as fit at ≥ 39 cells each (plus a
 * one-cell separator), rows balanced; the last row's lanes share its width. Plain mode stacks
 * lanes in rows only, so a screen reader reads one lane after another.
 */
export function laneGrid(width: number, height: number, count: number, plain: boolean): LaneRow[] {
  if (count <= 0 || height <= 0) return [];
  let cols = plain ? 1 : Math.max(1, Math.min(count, Math.floor((width + 1) / (MIN_LANE_WIDTH + 1))));
  const rows = Math.ceil(count / cols);
  cols = Math.ceil(count / rows);
  const out: LaneRow[] = [];
  let index = 0;
  let usedHeight = 0;
  for (let r = 0; r < rows; r++) {
    const inRow = Math.min(cols, count - index);
    const rowHeight = r === rows - 1 ? height - usedHeight : Math.floor(height / rows);
    usedHeight += rowHeight;
    const cells: LaneCell[] = [];
    const avail = width - (inRow - 1);
    let usedWidth = 0;
    for (let c = 0; c < inRow; c++) {
      const w = c === inRow - 1 ? avail - usedWidth : Math.floor(avail / inRow);
      usedWidth += w;
      cells.push({ index: index++, width: w, height: rowHeight });
    }
    out.push({ height: rowHeight, cells });
  }
  return out;
}
