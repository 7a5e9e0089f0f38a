import { readdir, readFile, stat } from 'node:fs/promises';
import type { Layout } from '../storage/layout';

export interface RunStats {
  readonly sessions: number;
  /** Complete lines on disk (one message each; a broken line still counts). */
  readonly messages: number;
  /** ISO mtime of the most recently written session file, or null without sessions. */
  readonly lastWrite: string | null;
}

/** Cheap figures for `legion runs`: counts newlines instead of parsing. Never writes. */
export async function runStats(layout: Layout, runId: string): Promise<RunStats> {
  const dir = layout.sessionsDir(runId);
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.jsonl'));
  } catch {
    return { sessions: 0, messages: 0, lastWrite: null };
  }
  let messages = 0;
  let last = 0;
  for (const name of names) {
    const file = `${dir}/${name}`;
    const [bytes, info] = await Promise.all([readFile(file), stat(file)]);
    let lines = 0;
    for (let i = bytes.indexOf(10); i !== -1; i = bytes.indexOf(10, i + 1)) lines++;
    messages += lines;
    last = Math.max(last, info.mtimeMs);
  }
  return { sessions: names.length, messages, lastWrite: last ? new Date(last).toISOString() : null };
}
