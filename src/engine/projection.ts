import { statSync, truncateSync } from 'node:fs';
import type { DurableJournal } from './durable-steps';

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0; // not created yet
  }
}

/**
 * The session file as it was when the turn started (docs/engine.md#a-turn-on-a-worker): the
 * first attempt records the file's size (step `projection-base`); every attempt cuts the file
 * back to it, so what a dead attempt appended is dropped and the replay appends it again from
 * the journaled steps. Only this session's file is touched; the engine runs one turn of a
 * session at a time.
 */
export async function resetProjection(file: string, journal: DurableJournal): Promise<void> {
  const base = await journal.run('projection-base', async () => sizeOf(file));
  if (sizeOf(file) > base) truncateSync(file, base);
}
