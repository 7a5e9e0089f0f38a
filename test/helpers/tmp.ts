import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh, empty temp directory; `cleanup` removes it (safe to call twice). */
export interface TempDir {
  readonly dir: string;
  cleanup(): Promise<void>;
}

export async function makeTempDir(prefix = 'legion-test-'): Promise<TempDir> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Run `fn` with a fresh temp directory that is removed afterwards, even on failure. */
export async function withTempDir<T>(fn: (dir: string) => Promise<T>, prefix?: string): Promise<T> {
  const temp = await makeTempDir(prefix);
  try {
    return await fn(temp.dir);
  } finally {
    await temp.cleanup();
  }
}

/** A fresh temp directory removed when the test `t` ends, passed or failed (node:test's `t.after`). */
export async function testTempDir(t: { after(fn: () => Promise<void>): void }, prefix?: string): Promise<string> {
  const temp = await makeTempDir(prefix);
  t.after(() => temp.cleanup());
  return temp.dir;
}
