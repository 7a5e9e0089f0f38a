import { lstat, open, realpath, rename, unlink, stat } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { resolveWorkspacePath, clip } from './path-safety';
import { mkdirPinned, pinDirectory, type PinnedDir } from './fd-location';

export type ConfinedWrite =
  | { readonly ok: true; readonly absolute: string; readonly relative: string; readonly created: boolean; readonly bytes: number }
  | { readonly ok: false; readonly error: string };

/** Test seams: run between the steps, e.g. to swap a directory for a symlink mid-write. */
export interface ConfinedWriteHooks {
  readonly afterMkdir?: () => Promise<void>;
  readonly afterTempWrite?: () => Promise<void>;
}

/**
 * Write `content` to a workspace path atomically (temp file beside it, fsync, rename), so a
 * reader sees the old or the new file, never half of one. Confinement is checked, then
 * checked again after the parent directories are created, and the parent's realpath once
 * more right before the rename: a symlink swapped in mid-run makes the write fail instead
 * of landing outside. The rename replaces a symlink at the final component rather than
 * following it, and an existing file keeps its permission bits. On Linux the parent directory
 * is pinned by a descriptor once checked (fd-location.ts), so the temp file and the rename
 * land in that directory even if a path component is swapped for a symlink afterwards.
 */
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

  const swapped = (): ConfinedWrite => ({ ok: false, error: `path "${clip(inputPath)}" changed while being written (a symlink appeared); refused` });
  const parent = dirname(first.absolute);
  try {
    await mkdirPinned(parent);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ESWAPPED') return swapped();
    const why = code === 'EEXIST' || code === 'ENOTDIR' ? 'a file is in the way' : code ?? (error as Error).message;
    return { ok: false, error: `cannot create the parent directory of ${first.relative}: ${why}` };
  }

  await hooks.afterMkdir?.();
  // Re-check right before writing: the directories now exist, a symlink may have appeared.
  const second = await resolveWorkspacePath(root, inputPath);
  if (!second.ok) return second;
  if (second.absolute !== first.absolute) return swapped();

  const data = Buffer.from(content, 'utf8');
  let pinned: PinnedDir;
  try {
    pinned = await pinDirectory(parent);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ESWAPPED' || code === 'ELOOP' || code === 'ENOTDIR') return swapped();
    return { ok: false, error: `cannot write ${second.relative}: ${code ?? (error as Error).message}` };
  }
  const name = basename(second.absolute);
  const tmpName = `.${name.slice(0, 60)}.${randomBytes(6).toString('hex')}.legion-tmp`;
  const tmp = join(pinned.base, tmpName);
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
    // Path re-check (the only guard where there is no procfs; a belt on Linux).
    if ((await realpath(parent)) !== parent || (await lstat(tmp)).isSymbolicLink()) {
      await unlink(tmp).catch(() => undefined);
      return swapped();
    }
    await rename(tmp, join(pinned.base, name));
  } catch (error) {
    await unlink(tmp).catch(() => undefined);
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, error: `cannot write ${second.relative}: ${code ?? (error as Error).message}` };
  } finally {
    await pinned.close();
  }
  return { ok: true, absolute: second.absolute, relative: second.relative, created, bytes: data.length };
}
