import { lstat, mkdir, open, realpath, type FileHandle } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';
import { constants, realpathSync } from 'node:fs';

/**
 * Linux hardening against path races: an open descriptor pins the file or directory it was
 * opened on, and `/proc/self/fd/<n>` names exactly that object whatever happens to the
 * path afterwards. Elsewhere (no procfs) these helpers return undefined and callers fall
 * back to path-based re-checks.
 */
const PROC_FD = '/proc/self/fd';

/** Where an open descriptor's object is now (realpath through procfs), or undefined without procfs. */
export async function locationOf(handle: FileHandle): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  try {
    return await realpath(`${PROC_FD}/${handle.fd}`);
  } catch {
    return undefined;
  }
}

/** locationOf for a plain descriptor, synchronously (for readers that are synchronous). */
export function locationOfFdSync(fd: number): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    return realpathSync(`${PROC_FD}/${fd}`);
  } catch {
    return undefined;
  }
}

export interface PinnedDir {
  /** A path prefix that resolves through the pinned directory itself (procfs), or the real path. */
  readonly base: string;
  close(): Promise<void>;
}

/**
 * Open the (realpath'd) directory `dir` without following a symlink at its last component
 * and confirm it is still at `dir`. Operations under `base` then reach that very directory
 * even if a path component is swapped for a symlink later. Fails (throws) when `dir` is no
 * longer what was checked.
 */
export async function pinDirectory(dir: string): Promise<PinnedDir> {
  if (process.platform !== 'linux') return { base: dir, close: async () => undefined };
  const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  const location = await locationOf(handle);
  if (location === undefined) {
    await handle.close();
    return { base: dir, close: async () => undefined };
  }
  if (location !== dir) {
    await handle.close();
    throw Object.assign(new Error(`${dir} moved`), { code: 'ESWAPPED' });
  }
  return { base: `${PROC_FD}/${handle.fd}`, close: () => handle.close() };
}

/**
 * Run `act` with the directory `dir` (a real path) pinned (pinDirectory): `act` gets a base that
 * reaches that very directory whatever happens to its path meanwhile. Without procfs the base is
 * `dir` itself, checked to hold no link on the way (ESWAPPED otherwise). Pinning's failure is a
 * value (the error and its code: ENOENT, ENOTDIR, ELOOP, ESWAPPED); `act`'s errors are thrown.
 */
export async function withPinnedDirectory<T>(
  dir: string,
  act: (base: string) => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: NodeJS.ErrnoException }> {
  let pinned: PinnedDir;
  try {
    pinned = await pinDirectory(dir);
  } catch (error) {
    return { ok: false, error: error as NodeJS.ErrnoException };
  }
  try {
    if (pinned.base === dir && (await realpath(dir).catch(() => undefined)) !== dir) {
      return { ok: false, error: Object.assign(new Error(`${dir} lies behind a symbolic link`), { code: 'ESWAPPED' }) };
    }
    return { ok: true, value: await act(pinned.base) };
  } finally {
    await pinned.close();
  }
}

/**
 * `mkdir -p dir` that cannot be redirected: on Linux, each missing directory is created
 * through a descriptor pinned on its (checked) parent and then opened without following a
 * symlink, so a component swapped for a symlink mid-way fails with ELOOP/ESWAPPED instead of
 * creating directories elsewhere. `dir` must be a realpath'd path whose existing part was
 * checked. Without procfs it falls back to a plain recursive mkdir.
 */
export async function mkdirPinned(dir: string): Promise<void> {
  const missing: string[] = [];
  let existing = dir;
  for (;;) {
    try {
      const info = await lstat(existing);
      if (!info.isDirectory()) throw Object.assign(new Error(`${existing} is not a directory`), { code: 'ENOTDIR' });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      const parent = dirname(existing);
      if (parent === existing) throw error;
      missing.unshift(basename(existing));
      existing = parent;
    }
  }
  if (missing.length === 0) return;
  const pinned = await pinDirectory(existing);
  if (!pinned.base.startsWith(PROC_FD)) {
    await mkdir(dir, { recursive: true });
    return;
  }
  let close = pinned.close;
  let base = pinned.base;
  try {
    for (const name of missing) {
      try {
        await mkdir(join(base, name));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const child = await open(join(base, name), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
      await close();
      close = () => child.close();
      base = `${PROC_FD}/${child.fd}`;
    }
  } finally {
    await close();
  }
}
