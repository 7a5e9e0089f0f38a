import { lstat, realpath, rmdir, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { gitText, type GitPlace } from './git';
import { withPinnedDirectory } from '../tools/fd-location';
import type { PlannedFile } from './undo-plan';

/**
 * Make `files` of the workspace what they were in `tree`: files absent from it are removed
 * (and the directories that become empty and were not in it), the others written back from the
 * shadow repository with their bytes and mode (git keeps the executable bit and symlinks).
 * The caller holds the repository lock and has just snapshotted (the shadow index is current).
 *
 * This runs outside the sandbox while agents may still be changing the workspace (another
 * agent's shell command): a folder swapped for a link to `~/.ssh` or a `.legion/` right after
 * the check must not make a removal land there. Each removal goes through a descriptor pinned
 * on the file's parent, which is confirmed to be that very folder of the workspace with no link
 * on the way (tools/fd-location.ts); a parent that is not (a link now) is left alone: the file
 * is not in the workspace any more. Writes are git's `checkout`, which replaces a link in a
 * leading folder by a real folder and a link, hard link or FIFO at the file itself by a new file.
 */
export async function applyRestore(place: GitPlace, tree: string, files: readonly PlannedFile[]): Promise<void> {
  const root = await realpath(place.workTree);
  const removed = files.filter((f) => f.action === 'delete').map((f) => f.path);
  const written = files.filter((f) => f.action !== 'delete').map((f) => f.path);
  for (const path of removed) {
    await inWorkspaceFolder(root, path, async (at) => {
      const info = await lstat(at).catch(() => undefined);
      if (info && !info.isDirectory()) await unlink(at);
    });
  }
  await removeEmptyParents(place, root, tree, removed);
  if (written.length > 0) {
    await gitText(place, ['checkout', tree, '--pathspec-from-file=-', '--pathspec-file-nul'], { input: written.join('\0') });
  }
}

/**
 * Run `act` on the workspace path `path` reached through its parent folder pinned (no link
 * anywhere from `root` to it); skipped when the parent is gone or is no such folder now.
 */
async function inWorkspaceFolder(root: string, path: string, act: (at: string) => Promise<void>): Promise<void> {
  await withPinnedDirectory(join(root, dirname(path)), (base) => act(join(base, basename(path))));
}

/** rmdir the parents of removed files, deepest first, that are empty now and are no directory of `tree`. */
async function removeEmptyParents(place: GitPlace, root: string, tree: string, removed: readonly string[]): Promise<void> {
  const dirs = new Set<string>();
  for (const path of removed) {
    for (let dir = dirname(path); dir !== '.' && dir !== '/' && dir !== ''; dir = dirname(dir)) dirs.add(dir);
  }
  if (dirs.size === 0) return;
  const inTree = new Set((await gitText(place, ['ls-tree', '-d', '-r', '-z', '--name-only', tree])).split('\0').filter(Boolean));
  const deepestFirst = [...dirs].filter((d) => !inTree.has(d)).sort((a, b) => b.split('/').length - a.split('/').length);
  for (const dir of deepestFirst) await inWorkspaceFolder(root, dir, (at) => rmdir(at)).catch(() => undefined);
}
