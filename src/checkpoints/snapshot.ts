import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { runGit, type GitPlace, type GitResult } from './git';
import { diffTrees, EMPTY_TREE } from './diff';
import type { FileChange } from './records';
import { readLargeExcludes, writeLargeExcludes, type CheckpointPaths } from './shadow-repo';
import { writeTextAtomic } from '../storage/atomic';

/**
 * Snapshot the workspace into the shadow repository and return the tree id (docs/undo.md).
 * Incremental: `git add -A` with the shadow index re-reads only files whose stat data changed
 * (git's stat cache; untracked cache for new files), `write-tree` reuses unchanged subtrees.
 * Files over `maxFileBytes` are not kept: they are dropped from the snapshot and listed in the
 * shadow repository's `info/exclude` while they stay too big, so they are hashed at most once.
 * The caller holds the repository lock.
 */
export interface SnapshotOptions {
  readonly maxFileBytes: number;
  /** The last tree taken: new and changed files are size-checked against it. */
  readonly previousTree?: string;
  /**
   * Every workspace-relative path that may have changed since `previousTree` was taken (the
   * change watcher's, see watcher.ts `changes()`): only these are given to `git add`. Absent:
   * the whole work tree is scanned. The index must hold `previousTree` (the last snapshot).
   */
  readonly only?: ReadonlySet<string>;
}

export interface Snapshot {
  readonly tree: string;
  /** What changed since `previousTree` (every file when there was none). */
  readonly changes: readonly FileChange[];
  /** Files left out for their size (newly found in this snapshot). */
  readonly tooLarge: readonly string[];
  /** Files git could not read (permissions): left as they were in the previous snapshot. */
  readonly unreadable: readonly string[];
  /** What `git add` looked at: only the listed paths (`only`), or the whole work tree. */
  readonly scope: 'changed' | 'all';
}

/**
 * Every `.legion/` (the workspace's, with this shadow repository; a nested workspace's web token
 * and rules), in any case, as an exclude pathspec: the shadow `info/exclude` leaves them out too,
 * but a `.gitignore` of the work tree outranks it, and its `!.legion/` (an agent can write one)
 * brought them into snapshots that an undo writes back. Pathspecs are literal otherwise (MAGIC
 * lifts that for these calls; the listed paths are marked `:(literal)`).
 */
const NO_LEGION = ':(top,exclude,glob,icase)**/.legion/**';
const MAGIC = { GIT_LITERAL_PATHSPECS: '0' };

export async function takeSnapshot(paths: CheckpointPaths, options: SnapshotOptions): Promise<Snapshot> {
  const { place } = paths;
  const released = await releaseShrunk(paths, options.maxFileBytes);
  const only = options.only && options.previousTree !== undefined && released.length === 0 ? await pathspecsOf(place.workTree, options.only) : undefined;
  const early = await tooLargeBeforeAdd(paths, options.maxFileBytes, only);
  const partial = only ? await addPaths(place, only) : undefined;
  const added = partial ?? (await runGit(place, ['add', '-A', '--ignore-errors', '--', ':/', NO_LEGION], { env: MAGIC }));
  const unreadable = added.ok ? [] : unreadableOf(added.stderr);
  const special = added.ok ? [] : await specialFilesOf(place);
  if (!added.ok && unreadable.length === 0 && special.length === 0 && !onlyIgnored(added.stderr)) throw new Error(`git add: ${added.error}`);
  if (special.length > 0) {
    const dropped = await runGit(place, ['update-index', '-z', '--force-remove', '--stdin'], { input: special.join('\0') + '\0' });
    if (!dropped.ok) throw new Error(`git update-index --force-remove: ${dropped.error}`);
  }
  let tree = await writeTree(place);
  let changed = await diffTrees(place, options.previousTree ?? EMPTY_TREE, tree);
  const big: string[] = [];
  await Promise.all(changed.filter((c) => c.status !== 'D').map(async (c) => {
    const info = await lstat(join(place.workTree, c.path)).catch(() => undefined);
    if (info && info.isFile() && info.size > options.maxFileBytes) big.push(c.path);
  }));
  if (big.length > 0) {
    big.sort();
    const removed = await runGit(place, ['rm', '--cached', '-q', '--ignore-unmatch', '--pathspec-from-file=-', '--pathspec-file-nul'], { input: big.join('\0') });
    if (!removed.ok) throw new Error(`git rm --cached: ${removed.error}`);
    const large = new Set(await readLargeExcludes(paths));
    for (const path of big) large.add(path);
    await writeLargeExcludes(paths, [...large].sort());
    tree = await writeTree(place);
    const left = new Set(big);
    changed = changed.filter((c) => !left.has(c.path));
  }
  return { tree, changes: changed, tooLarge: [...early, ...big].sort(), unreadable, scope: partial ? 'changed' : 'all' };
}

/**
 * The files over the limit that `git add` would read, found and left out before it runs: git
 * hashes a file before anything can drop it, and a sparse `truncate -s 1T big` (an agent's
 * command, a second of its time) kept every later checkpoint, and so every batch and undo,
 * waiting for git to hash a terabyte. Each listed file is looked at (`lstat`); a listed folder,
 * or the whole work tree without a list, through `git ls-files` of the changed and new files
 * (git's stat cache: nothing is read). The snapshot's own size check after `git add` stays for
 * files that grew in between.
 */
async function tooLargeBeforeAdd(paths: CheckpointPaths, maxFileBytes: number, only: readonly string[] | undefined): Promise<string[]> {
  const { place } = paths;
  const found = new Set<string>();
  const folders: string[] = [];
  const look = async (path: string): Promise<void> => {
    const info = await lstat(join(place.workTree, path)).catch(() => undefined);
    if (info?.isDirectory()) folders.push(path);
    else if (info?.isFile() && info.size > maxFileBytes) found.add(path);
  };
  for (const path of only ?? []) await look(path);
  if (!only || folders.length > 0) {
    const specs = only ? folders.map((dir) => `:(literal)${dir}`) : [':/'];
    const listed = await runGit(place, ['ls-files', '-z', '-m', '-o', '--exclude-standard', '--', ...specs, NO_LEGION], { env: MAGIC });
    if (!listed.ok) throw new Error(`git ls-files: ${listed.error}`);
    for (const path of new Set(listed.stdout.toString('utf8').split('\0').filter(Boolean))) {
      const info = await lstat(join(place.workTree, path)).catch(() => undefined);
      if (info?.isFile() && info.size > maxFileBytes) found.add(path);
    }
  }
  if (found.size === 0) return [];
  const big = [...found].sort();
  const dropped = await runGit(place, ['update-index', '-z', '--force-remove', '--stdin'], { input: big.join('\0') + '\0' });
  if (!dropped.ok) throw new Error(`git update-index --force-remove: ${dropped.error}`);
  await writeLargeExcludes(paths, [...new Set([...(await readLargeExcludes(paths)), ...big])].sort());
  return big;
}

async function writeTree(place: GitPlace): Promise<string> {
  const result = await runGit(place, ['write-tree']);
  if (!result.ok) throw new Error(`git write-tree: ${result.error}`);
  return result.stdout.toString('utf8').trim();
}

/** Files excluded for their size that are gone or small again are snapshotted again; returns them. */
async function releaseShrunk(paths: CheckpointPaths, maxFileBytes: number): Promise<string[]> {
  const large = await readLargeExcludes(paths);
  if (large.length === 0) return [];
  const still: string[] = [];
  const released: string[] = [];
  for (const path of large) {
    const info = await lstat(join(paths.place.workTree, path)).catch(() => undefined);
    if (info && info.isFile() && info.size > maxFileBytes) still.push(path);
    else released.push(path);
  }
  if (released.length > 0) await writeLargeExcludes(paths, still);
  return released;
}

/**
 * The pathspecs for `git add -A` of the changed paths: each path that exists as itself, a path
 * that is gone as its nearest existing folder (git fails on a pathspec that matches nothing,
 * e.g. a file made and removed between two snapshots). Undefined when that folder is the
 * workspace itself: the whole tree is scanned then, as without a list.
 */
async function pathspecsOf(root: string, changed: ReadonlySet<string>): Promise<string[] | undefined> {
  const specs = new Set<string>();
  for (const path of changed) {
    let spec = path;
    while (spec !== '' && !(await lstat(join(root, spec)).then(() => true, () => false))) spec = spec.includes('/') ? spec.slice(0, spec.lastIndexOf('/')) : '';
    if (spec === '') return undefined;
    specs.add(spec);
  }
  return [...specs].sort();
}

/**
 * `git add -A` of the given paths only (literal pathspecs, recursive for folders). Undefined when
 * git refused the list as a whole (a path in a nested repository…): the caller scans everything.
 */
async function addPaths(place: GitPlace, specs: readonly string[]): Promise<GitResult | undefined> {
  if (specs.length === 0) return { ok: true, stdout: Buffer.alloc(0), stderr: '' };
  const literal = specs.map((spec) => `:(literal)${spec}`);
  const added = await runGit(place, ['add', '-A', '--ignore-errors', '--pathspec-from-file=-', '--pathspec-file-nul'], { input: [...literal, NO_LEGION].join('\0'), env: MAGIC });
  return !added.ok && /^fatal:/m.test(added.stderr) ? undefined : added;
}

/**
 * git names a changed file the workspace ignores (`*.log`…) when it is given by path, and exits 1
 * having added everything else: such a file is left out of snapshots anyway.
 */
function onlyIgnored(stderr: string): boolean {
  const lines = stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('hint:'));
  return lines[0] === 'The following paths are ignored by one of your .gitignore files:' && !lines.some((line) => /^(fatal|error):/.test(line));
}

/**
 * Files of the last snapshot that are neither a file, a link nor a folder now (a FIFO, a socket,
 * a device an agent put in their place): git refuses to add them and, without this, every
 * snapshot and so every undo failed from then on. They are recorded as gone (an undo that
 * brings the file back replaces the FIFO; nothing ever opens it). Only asked when `git add` failed.
 */
async function specialFilesOf(place: GitPlace): Promise<string[]> {
  const listed = await runGit(place, ['ls-files', '-z', '-m']);
  if (!listed.ok) return [];
  const found: string[] = [];
  for (const path of listed.stdout.toString('utf8').split('\0').filter(Boolean)) {
    const info = await lstat(join(place.workTree, path)).catch(() => undefined);
    if (info && !info.isFile() && !info.isSymbolicLink() && !info.isDirectory()) found.push(path);
  }
  return found;
}

function unreadableOf(stderr: string): string[] {
  const found: string[] = [];
  for (const line of stderr.split('\n')) {
    const match = /^error: (?:open\("(.+)"\)|unable to index file '(.+)')/.exec(line);
    const path = match?.[1] ?? match?.[2];
    if (path) found.push(path);
  }
  return found;
}

/** Keep `tree` reachable under `refs/legion/<name>` (a loose ref written directly: temp file and rename). */
export async function keepTree(place: GitPlace, name: string, tree: string): Promise<void> {
  await writeTextAtomic(join(place.gitDir, 'refs', 'legion', name), `${tree}\n`, { sync: false });
}

/** Drop refs (prune); git handles loose and packed refs. */
export async function dropRefs(place: GitPlace, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  const input = names.map((name) => `delete refs/legion/${name}\n`).join('');
  const result = await runGit(place, ['update-ref', '--stdin'], { input });
  if (!result.ok) throw new Error(`git update-ref: ${result.error}`);
}
