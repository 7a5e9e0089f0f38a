import { readFileSync } from 'node:fs';

/**
 * The lines of a JSON-lines file that another process may be appending to right now, parsed:
 * only lines already ended by their newline (a reader can catch an append half copied: a line
 * crossing a page boundary shows its first part before the rest). A missing file has none.
 * For checks polled while a worker or a server writes; once the writer is done, all lines are whole.
 */
export function writtenJsonLines<T = unknown>(file: string): T[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const whole = text.slice(0, text.lastIndexOf('\n') + 1);
  return whole.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as T);
}
