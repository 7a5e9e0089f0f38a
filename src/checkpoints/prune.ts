import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { runGit } from './git';
import { rewriteCheckpoints } from './records';
import { dropRefs } from './snapshot';
import type { CheckpointStore } from './store';

/**
 * Housekeeping (docs/undo.md): checkpoints older than `keepDays` are dropped, then the oldest
 * ones while the shadow repository is larger than `maxRepoBytes` (the latest checkpoint is
 * always kept), and `git gc --prune=now` removes what no checkpoint needs any more.
 */
export interface PruneLimits {
  readonly keepDays: number;
  readonly maxRepoBytes: number;
}

export interface PruneOutcome {
  readonly removed: number;
  readonly kept: number;
  readonly bytesBefore: number;
  readonly bytesAfter: number;
}

export async function pruneCheckpoints(store: CheckpointStore, limits: PruneLimits, now: Date): Promise<PruneOutcome> {
  return store.lock.run(async () => {
    const { place } = store.paths;
    let checkpoints = await store.list();
    const bytesBefore = await sizeOf(place.gitDir);
    const cutoff = now.getTime() - limits.keepDays * 86_400_000;
    const drop = async (gone: readonly string[]): Promise<void> => {
      if (gone.length === 0) return;
      const set = new Set(gone);
      checkpoints = checkpoints.filter((c) => !set.has(c.id));
      await rewriteCheckpoints(store.paths.records, checkpoints);
      await dropRefs(place, gone.flatMap((id) => [`before/${id}`, `after/${id}`]));
    };
    const total = checkpoints.length;
    const old = checkpoints.slice(0, -1).filter((c) => Date.parse(c.at) < cutoff).map((c) => c.id);
    await drop(old);
    await gc(store);
    let bytes = await sizeOf(place.gitDir);
    // Too big still: drop the oldest quarter at a time (at least one), keeping the latest.
    while (bytes > limits.maxRepoBytes && checkpoints.length > 1) {
      const count = Math.max(1, Math.floor(checkpoints.length / 4));
      await drop(checkpoints.slice(0, Math.min(count, checkpoints.length - 1)).map((c) => c.id));
      await gc(store);
      bytes = await sizeOf(place.gitDir);
    }
    return { removed: total - checkpoints.length, kept: checkpoints.length, bytesBefore, bytesAfter: bytes };
  });
}

async function gc(store: CheckpointStore): Promise<void> {
  const result = await runGit(store.paths.place, ['gc', '--quiet', '--prune=now']);
  if (!result.ok) throw new Error(`git gc: ${result.error}`);
}

/** Bytes on disk under `dir` (files only). */
export async function sizeOf(dir: string): Promise<number> {
  let total = 0;
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await sizeOf(path);
    else if (entry.isFile()) total += (await stat(path).catch(() => ({ size: 0 }))).size;
  }
  return total;
}
