import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { dirname, join, basename } from 'node:path';

/** Write `text` so readers see the old or the new content, never half (temp file, fsync, rename). */
export async function writeTextAtomic(path: string, text: string, options: { sync?: boolean } = {}): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`);
  const handle = await open(tmp, 'w', 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    if (options.sync !== false) await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, path);
  } catch (error) {
    await unlink(tmp).catch(() => undefined);
    throw error;
  }
}
