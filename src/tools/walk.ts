import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { IgnoreFilter } from './gitignore';

export interface WalkedFile {
  readonly absolute: string;
  /** Workspace-relative, `/` separators. */
  readonly relative: string;
}

export interface WalkOptions {
  readonly filter: IgnoreFilter;
  readonly signal?: AbortSignal;
}

/**
 * Regular files under a workspace directory, depth first in name order, pruning what
 * `filter` ignores (so an ignored tree is never entered). Symlinks are not followed and
 * not yielded; unreadable directories are skipped.
 */
export async function* walkFiles(startAbsolute: string, startRelative: string, options: WalkOptions): AsyncGenerator<WalkedFile> {
  const stack: { abs: string; rel: string }[] = [{ abs: startAbsolute, rel: startRelative === '.' ? '' : startRelative }];
  while (stack.length > 0) {
    if (options.signal?.aborted) return;
    const dir = stack.pop()!;
    let entries;
    try {
      entries = await readdir(dir.abs, { withFileTypes: true });
    } catch {
      continue;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: { abs: string; rel: string }[] = [];
    for (const entry of entries) {
      const rel = dir.rel === '' ? entry.name : `${dir.rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!(await options.filter.ignores(rel, true))) subdirs.push({ abs: join(dir.abs, entry.name), rel });
      } else if (entry.isFile()) {
        if (!(await options.filter.ignores(rel, false))) yield { absolute: join(dir.abs, entry.name), relative: rel };
      }
    }
    for (let i = subdirs.length - 1; i >= 0; i -= 1) stack.push(subdirs[i]!);
  }
}
