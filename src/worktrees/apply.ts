import { lstat, open, readdir, readFile, realpath, rename, rmdir, symlink, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { mkdirPinned, withPinnedDirectory } from '../tools/fd-location';
import { z } from 'zod';
import type { GitPlace } from '../checkpoints/git';
import { diffTrees } from '../checkpoints/diff';
import { writeJsonAtomic } from '../storage/atomic';
import { git } from './repo';
import { inWorkspace } from './merge';
import { lazySchema } from '../storage/lazy-schema';

/**
 * Applying a clean merge to the workspace's working tree (docs/worktrees.md#merge-requests):
 * uncommitted, file by file, never through git's index or a commit. Crash safety: the whole
 * change (each path with the blob it gets, or its deletion) is written to a journal first
 * (`.legion/worktrees/<session-id>.merge.json`, fsynced); a process killed mid-way leaves the
 * journal, and `recoverMerges` finishes it at the next start, so the workspace ends before the
 * merge (no journal yet) or after it — never half. Every step is idempotent.
 */
const opSchema = lazySchema(() =>
  z.object({
    path: z.string().min(1),
    kind: z.enum(['write', 'delete']),
    mode: z.string().optional(),
    oid: z.string().optional(),
  }),
);
const journalSchema = lazySchema(() => z.object({ version: z.literal(1), sessionId: z.string(), merged: z.string(), ops: z.array(opSchema()) }));
export type MergeOp = z.infer<ReturnType<typeof opSchema>>;
export type MergeJournal = z.infer<ReturnType<typeof journalSchema>>;

export const journalOf = (dir: string, sessionId: string): string => join(dir, `${sessionId}.merge.json`);

/** The operations taking the workspace from tree `ours` to tree `merged` (workspace paths only). */
export async function mergeOps(place: GitPlace, prefix: string, ours: string, merged: string): Promise<MergeOp[]> {
  const ops: MergeOp[] = [];
  for (const change of await diffTrees(place, ours, merged)) {
    const path = inWorkspace(change.path, prefix);
    if (path === null || change.newMode === '160000' || change.oldMode === '160000') continue;
    ops.push(change.status === 'D' ? { path, kind: 'delete' } : { path, kind: 'write', mode: change.newMode, oid: change.newBlob });
  }
  // Deletions first: a folder that becomes a file is emptied before the file is written.
  return ops.sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'delete' ? -1 : 1));
}

export interface ApplyHooks {
  /** Called after each operation (tests stop the process here to prove crash safety). */
  readonly afterOp?: (index: number) => void;
  /** Test seam: run after an operation's path was checked, right before it is carried out (a racing agent). */
  readonly beforeOp?: (index: number) => Promise<void>;
}

/**
 * Check, journal, apply, drop the journal. A path behind a symbolic link refuses the whole merge
 * before anything is written or journaled; an I/O failure while writing leaves the journal for recovery.
 * `blobs`: the contents of the ops' blobs when already being read (`readBlobs`, started early).
 */
export async function applyMerge(place: GitPlace, workspaceRoot: string, journalPath: string, journal: MergeJournal, hooks: ApplyHooks = {}, blobs?: Promise<Map<string, Buffer>>): Promise<void> {
  for (const op of journal.ops) await checkParents(workspaceRoot, op.path);
  await writeJsonAtomic(journalPath, journal);
  await runOps(place, workspaceRoot, journal.ops, hooks, blobs);
  await unlink(journalPath);
}

/** The blob ids the ops write. */
export const blobsOf = (ops: readonly MergeOp[]): string[] => ops.flatMap((op) => (op.kind === 'write' && op.oid ? [op.oid] : []));

/** Finish every merge a killed process left half done (their journals). Returns the sessions finished. */
export async function recoverMerges(place: GitPlace, workspaceRoot: string, dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const done: string[] = [];
  for (const name of names.filter((n) => n.endsWith('.merge.json'))) {
    const path = join(dir, name);
    let journal: MergeJournal;
    try {
      journal = journalSchema().parse(JSON.parse(await readFile(path, 'utf8')));
    } catch {
      continue; // a torn journal was never complete: nothing was applied from it
    }
    try {
      await runOps(place, workspaceRoot, journal.ops, {});
    } catch {
      continue; // refused or failing again: the journal stays, the others are still finished
    }
    await unlink(path);
    done.push(journal.sessionId);
  }
  return done;
}

async function runOps(place: GitPlace, workspaceRoot: string, ops: readonly MergeOp[], hooks: ApplyHooks, early?: Promise<Map<string, Buffer>>): Promise<void> {
  const blobs = await (early ?? readBlobs(place, blobsOf(ops)));
  const root = await realpath(workspaceRoot);
  // Every path is checked before the first file changes: a refused merge changes nothing.
  for (const op of ops) await checkParents(root, op.path);
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    const target = join(root, op.path);
    await checkParents(root, op.path);
    await hooks.beforeOp?.(i);
    // Other agents work in the workspace meanwhile: the folder checked is the folder changed, pinned
    // by a descriptor (tools/fd-location.ts), so one swapped for a link since is refused, not followed.
    const name = basename(target);
    if (op.kind === 'delete') {
      await inPinnedParent(root, op.path, false, (dir) => unlink(join(dir, name)).catch((e: NodeJS.ErrnoException) => { if (e.code !== 'ENOENT') throw e; }));
      await pruneEmpty(root, dirname(op.path));
    } else {
      const content = blobs.get(op.oid!);
      if (!content) throw new Error(`blob ${op.oid} of ${op.path} is missing`);
      await inPinnedParent(root, op.path, true, async (dir) => {
        const existing = await lstat(join(dir, name)).catch(() => undefined);
        if (existing?.isDirectory()) throw new Error(`${op.path} is a folder in the workspace`);
        const tmp = join(dir, `.legion-merge-${process.pid}-${Math.random().toString(36).slice(2, 8)}.tmp`);
        if (op.mode === '120000') await symlink(content.toString('utf8'), tmp);
        else await writeNew(tmp, content, op.mode === '100755' ? 0o755 : 0o644);
        await rename(tmp, join(dir, name)).catch(async (error: unknown) => { await unlink(tmp).catch(() => undefined); throw error; });
      });
    }
    hooks.afterOp?.(i);
  }
}

/** No parent of `rel` inside the workspace may be a symbolic link (a write must not leave the workspace). */
async function checkParents(root: string, rel: string): Promise<void> {
  const parts = rel.split('/').slice(0, -1);
  let at = root;
  for (const part of parts) {
    at = join(at, part);
    const info = await lstat(at).catch(() => undefined);
    if (!info) return;
    if (info.isSymbolicLink()) throw new Error(`refused: ${rel} lies behind the symbolic link ${at.slice(root.length + 1)}`);
  }
}

/**
 * Run `act` with the parent folder of the workspace path `rel` pinned (created first when
 * `create`): `act` gets a path that reaches that very folder whatever happens to its path
 * meanwhile. Refused when a link lies on the way from `root` (a real path) to it.
 */
async function inPinnedParent(root: string, rel: string, create: boolean, act: (dir: string) => Promise<void>): Promise<void> {
  const parent = join(root, dirname(rel));
  const linked = (error: unknown): boolean => ['ESWAPPED', 'ELOOP', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '');
  const refused = (): Error => new Error(`refused: ${rel} lies behind a symbolic link (it appeared while the merge was applied)`);
  if (create) {
    try {
      await mkdirPinned(parent);
    } catch (error) {
      throw linked(error) ? refused() : error;
    }
  }
  const done = await withPinnedDirectory(parent, act);
  if (done.ok || (!create && done.error.code === 'ENOENT')) return; // ENOENT: nothing to remove
  throw linked(done.error) ? refused() : done.error;
}

async function pruneEmpty(root: string, relDir: string): Promise<void> {
  for (let dir = relDir; dir !== '.' && dir !== ''; dir = dirname(dir)) {
    try { await inPinnedParent(root, dir, false, (at) => rmdir(join(at, basename(dir)))); } catch { return; }
  }
}

/** Write a new file (never an existing one: `wx`) with `content` and `mode`. */
async function writeNew(tmp: string, content: Buffer, mode: number): Promise<void> {
  const handle = await open(tmp, 'wx', mode);
  try {
    await handle.writeFile(content);
    await handle.chmod(mode);
  } finally {
    await handle.close();
  }
}

/**
 * Blob contents by id, through one `git cat-file --batch`. The ids may be a promise: the process
 * starts at once (its start-up overlaps whatever computes them).
 */
export async function readBlobs(place: GitPlace, ids: readonly string[] | Promise<readonly string[]>): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (Array.isArray(ids) && ids.length === 0) return out;
  const input = Promise.resolve(ids).then((oids) => [...new Set(oids)].map((oid) => `${oid}\n`).join(''));
  const result = await git(place, ['cat-file', '--batch'], { input });
  if (!result.ok) throw new Error(`git cat-file: ${result.error}`);
  const buf = result.stdout;
  let at = 0;
  while (at < buf.length) {
    const eol = buf.indexOf(10, at);
    if (eol === -1) break;
    const [oid, type, size] = buf.subarray(at, eol).toString('utf8').split(' ');
    if (type === 'missing' || size === undefined) { at = eol + 1; continue; }
    const length = Number(size);
    out.set(oid!, buf.subarray(eol + 1, eol + 1 + length));
    at = eol + 1 + length + 1;
  }
  return out;
}
