/**
 * React keys for the rows of a lane, so that a frame redraws only the rows whose line changed.
 *
 * A row keeps its key (slot) while it shows the same transcript line (same id), wherever it
 * moves on screen; a line new on screen takes a slot that no line kept, lowest first. So:
 * - a streamed line pushing the view up by one: every other row keeps its key and its text
 *   (React moves one row and updates its text; with keys by screen position every row's
 *   text would change);
 * - a different session or a page of new lines: the rows take slots 0, 1, 2… as before, so
 *   React updates the existing rows' texts instead of replacing every row.
 * Slots are always 0…rows−1.
 */
export class RowSlots {
  private slots = new Map<string, number>();

  /** Slot (key) per row; `null` ids (blank filler rows) take free slots. */
  assign(ids: readonly (string | null)[]): number[] {
    const next = new Map<string, number>();
    const used: boolean[] = [];
    const out: number[] = new Array<number>(ids.length).fill(-1);
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (id === null || id === undefined) continue;
      const slot = this.slots.get(id);
      if (slot === undefined || slot >= ids.length || used[slot]) continue;
      out[i] = slot;
      used[slot] = true;
      next.set(id, slot);
    }
    let free = 0;
    for (let i = 0; i < ids.length; i++) {
      if (out[i] !== -1) continue;
      while (used[free]) free++;
      out[i] = free;
      used[free] = true;
      const id = ids[i];
      if (id !== null && id !== undefined) next.set(id, free);
    }
    this.slots = next;
    return out;
  }
}
