import { lstatSync, realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isInside } from './secrets';

/**
 * Mounts for files that run or define something unsandboxed (docs/sandbox.md#trusted-files):
 * each existing regular file inside `root` (after symlinks) is bound read-only over itself,
 * and every directory between `root` and it is bound over itself first (`pinned`), since a
 * mount point cannot be renamed, removed or replaced: a command can neither rewrite the file
 * (nor append to it while bash reads it) nor move its directory aside and plant another.
 * A file reached through a symlink (`.claude/hooks/check.sh` → `scripts/check.sh`): the link
 * itself cannot be bound, so the directory holding it is bound read-only as a whole (unless
 * that is the workspace root: docs/sandbox.md#limits).
 * `pinned` comes shallowest first (a later, shallower bind would cover a deeper one).
 */
export function trustedFileMounts(root: string, paths: readonly string[]): { readonly pinned: string[]; readonly readOnly: string[] } {
  const readOnly = new Set<string>();
  const pinned = new Set<string>();
  for (const path of paths) {
    let real: string;
    try {
      real = realpathSync(path);
      if (!lstatSync(real).isFile()) continue;
    } catch {
      continue; // missing: the trust check refuses a file that appears or changes
    }
    // Outside the writable tree it is read-only already.
    if (real === root || !isInside(real, root)) continue;
    const guard = (target: string) => {
      readOnly.add(target);
      for (let dir = dirname(target); dir !== root && isInside(dir, root); dir = dirname(dir)) pinned.add(dir);
    };
    guard(real);
    if (real !== resolve(path)) {
      let holder: string;
      try {
        holder = realpathSync(dirname(path));
      } catch {
        continue;
      }
      if (holder !== root && isInside(holder, root)) guard(holder);
    }
  }
  // A path inside a read-only directory is covered already; pinning it would make it writable again.
  for (const dir of [...pinned]) if ([...readOnly].some((ro) => ro !== dir && isInside(dir, ro))) pinned.delete(dir);
  return { pinned: [...pinned].sort((a, b) => a.length - b.length), readOnly: [...readOnly] };
}
