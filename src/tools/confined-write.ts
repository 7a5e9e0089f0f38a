import { lstat, mkdir, open, realpath, rename, unlink, stat } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { resolveWorkspacePath, clip } from './path-safety';

export type ConfinedWrite =
  | { readonly ok: true; readonly absolute: string; readonly relative: string; readonly created: boolean; readonly bytes: number }
  | { readonly ok: false; readonly error: string };

/**
 * Write `content` to a workspace path atomically (temp file beside it, fsync, rename), so a
 * reader sees the old or the new file, never half of one. Confinement is checked, then
 * checked again after the parent directories are created, and the parent's realpath once
 * more right before the rename: a symlink swapped in mid-run makes the write fail instead
 * of landing outside. The rename replaces a symlink at the final component rather than
 * following it, and an existing file keeps its permission bits.
 */
/** Test seams: run between the steps, e.g. to swap a directory for a symlink mid-write. */
export interface ConfinedWriteHooks {
  readonly afterMkdir?: () => Promise<void>;
  readonly afterTempWrite?: () => Promise<void>;
}

export async function writeFileConfined(root: string, inputPath: string, content: string, hooks: ConfinedWriteHooks = {}): Promise<ConfinedWrite> {
  const first = await resolveWorkspacePath(root, inputPath);
  if (!first.ok) return first;
  if (first.relative === '.') return { ok: false, error: 'cannot write to the workspace root: give a file path' };

  let mode: number | undefined;
  let created = true;
  try {
    const existing = await stat(first.absolute);
    if (existing.isDirectory()) return { ok: false, error: `${first.relative} is a directory` };
    if (!existing.isFile()) return { ok: false, error: `${first.relative} is not a regular file` };
    mode = existing.mode & 0o7777;
    created = false;
  } catch {
    // does not exist yet
  }

  const parent = dirname(first.absolute);
  try {
    await mkdir(parent, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'EEXIST' || code === 'ENOTDIR' ? 'a file is in the way' : code ?? (error as Error).message;
    return { ok: false, error: `cannot create the parent directory of ${first.relative}: ${why}` };
  }

  await hooks.afterMkdir?.();
  // Re-check right before writing: the directories now exist, a symlink may have appeared.
  const second = await resolveWorkspacePath(root, inputPath);
  if (!second.ok) return second;
  if (second.absolute !== first.absolute) {
    return { ok: false, error: `path "${clip(inputPath)}" changed while being written (a symlink appeared); refused` };
  }

  const data = Buffer.from(content, 'utf8');
  const tmp = join(parent, `.${basename(second.absolute).slice(0, 100)}.${randomBytes(6).toString('hex')}.legion-tmp`);
  try {
    const handle = await open(tmp, 'wx', mode ?? 0o666);
    try {
      await handle.writeFile(data);
      if (mode !== undefined) await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await hooks.afterTempWrite?.();
    if ((await realpath(parent)) !== parent || (await lstat(tmp)).isSymbolicLink()) {
      await unlink(tmp).catch(() => undefined);
      return { ok: false, error: `path "${clip(inputPath)}" changed while being written (a symlink appeared); refused` };
    }
    await rename(tmp, second.absolute);
  } catch (error) {
    await unlink(tmp).catch(() => undefined);
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, error: `cannot write ${second.relative}: ${code ?? (error as Error).message}` };
  }
  return { ok: true, absolute: second.absolute, relative: second.relative, created, bytes: data.length };
}
