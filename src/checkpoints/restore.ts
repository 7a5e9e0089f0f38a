import { lstat, rmdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { gitText, type GitPlace } from './git';
import type { PlannedFile } from './undo-plan';

/**
 * Make `files` of the workspace what they were in `tree`: files absent from it are removed
 * (and the directories that become empty and were not in it), the others written back from the
 * shadow repository with their bytes and mode (git keeps the executable bit and symlinks).
 * The caller holds the repository lock and has just snapshotted (the shadow index is current).
 */
export async function applyRestore(place: GitPlace, tree: string, files: readonly PlannedFile[]): Promise<void> {
  const removed = files.filter((f) => f.action === 'delete').map((f) => f.path);
  const written = files.filter((f) => f.action !== 'delete').map((f) => f.path);
  for (const path of removed) {
    const info = await lstat(join(place.workTree, path)).catch(() => undefined);
    if (info && !info.isDirectory()) await unlink(join(place.workTree, path));
  }
  await removeEmptyParents(place, tree, removed);
  if (written.length > 0) {
    await gitText(place, ['checkout', tree, '--pathspec-from-file=-', '--pathspec-file-nul'], { input: written.join('\0') });
  }
}

/** rmdir the parents of removed files, deepest first, that are empty now and are no directory of `tree`. */
async function removeEmptyParents(place: GitPlace, tree: string, removed: readonly string[]): Promise<void> {
  const dirs = new Set<string>();
  for (const path of removed) {
    for (let dir = dirname(path); dir !== '.' && dir !== '/' && dir !== ''; dir = dirname(dir)) dirs.add(dir);
  }
  if (dirs.size === 0) return;
  const inTree = new Set((await gitText(place, ['ls-tree', '-d', '-r', '-z', '--name-only', tree])).split('\0').filter(Boolean));
  const deepestFirst = [...dirs].filter((d) => !inTree.has(d)).sort((a, b) => b.split('/').length - a.split('/').length);
  for (const dir of deepestFirst) await rmdir(join(place.workTree, dir)).catch(() => undefined);
}
