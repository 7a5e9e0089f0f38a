import { mkdirSync, openSync, writeSync, fsyncSync, closeSync, renameSync, unlinkSync } from 'node:fs';
import { open, rename, unlink, mkdir } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './private-mode';

function tempPath(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${Date.now()}.${Math.random().toString(36).slice(2, 8)}.tmp`);
}

/**
 * Write a JSON file so that a reader sees either the old or the new content, never half:
 * write a temp file beside it, fsync it, rename it over the target, fsync the directory.
 * The file is private (0600) and missing folders are created private (0700).
 */
export async function writeJsonAtomic(path: string, value: unknown): Promise<void> {
  await writeTextAtomic(path, jsonFileText(value));
}

/** The text `writeJsonAtomic` and `writeJsonAtomicSync` write of `value`. */
export function jsonFileText(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

/**
 * Write `text` atomically, as `writeJsonAtomic` does. `sync: false` skips both fsyncs, for files
 * that can be rebuilt after a crash (a reader still never sees half a file).
 */
export async function writeTextAtomic(path: string, text: string, options: { sync?: boolean } = {}): Promise<void> {
  const sync = options.sync !== false;
  await mkdir(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
  const tmp = tempPath(path);
  const handle = await open(tmp, 'w', PRIVATE_FILE_MODE);
  try {
    await handle.writeFile(text, 'utf8');
    if (sync) await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(tmp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  try {
    await rename(tmp, path);
  } catch (error) {
    await unlink(tmp).catch(() => undefined);
    throw error;
  }
  if (sync) await syncDir(dirname(path));
}

/**
 * Synchronous twin of `writeJsonAtomic`, for exit paths that cannot await. `sync: false` skips
 * the fsync (as `writeTextAtomic`'s): the file survives its writer's death, not the machine's.
 */
export function writeJsonAtomicSync(path: string, value: unknown, options: { sync?: boolean } = {}): void {
  const data = jsonFileText(value);
  mkdirSync(dirname(path), { recursive: true, mode: PRIVATE_DIR_MODE });
  const tmp = tempPath(path);
  const fd = openSync(tmp, 'w', PRIVATE_FILE_MODE);
  try {
    writeSync(fd, data);
    if (options.sync !== false) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (error) {
    try { unlinkSync(tmp); } catch { /* already gone */ }
    throw error;
  }
}

async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try { await handle.sync(); } finally { await handle.close(); }
  } catch {
    // Some filesystems refuse fsync on directories; the rename is still atomic.
  }
}
