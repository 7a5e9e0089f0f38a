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

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * Regular files under a workspace directory, depth first, entries of each directory in
 * name order (so the output is stable), pruning what `filter` ignores (an ignored tree is
 * never entered). Symlinks are neither followed nor yielded; unreadable directories are
 * skipped.
 */
export async function* walkFiles(startAbsolute: string, startRelative: string, options: WalkOptions): AsyncGenerator<WalkedFile> {
  yield* walkDir(startAbsolute, startRelative === '.' ? '' : startRelative, options);
}

async function* walkDir(abs: string, rel: string, options: WalkOptions): AsyncGenerator<WalkedFile> {
  if (options.signal?.aborted) return;
  let entries;
  try {
    entries = await readdir(abs, { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort(byName);
  for (const entry of entries) {
    if (options.signal?.aborted) return;
    const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
    const childAbs = join(abs, entry.name);
    if (entry.isDirectory()) {
      if (!(await options.filter.ignores(childRel, true))) yield* walkDir(childAbs, childRel, options);
    } else if (entry.isFile()) {
      if (!(await options.filter.ignores(childRel, false))) yield { absolute: childAbs, relative: childRel };
    }
  }
}
