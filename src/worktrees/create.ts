import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import type { GitPlace } from '../checkpoints/git';
import { messageOf } from '../errors';
import { gitOut, placeOf, type Repo } from './repo';
import { LEGION_IDENTITY, snapshotCommit } from './snapshot';
import type { WorktreeRecord, WorktreeStore } from './store';

export const branchOf = (sessionId: string): string => `legion/${sessionId}`;

export interface IsolateRequest {
  readonly workspaceRoot: string;
  /** The repository of the workspace (found once per run: `findRepo`), or why there is none. */
  readonly repo: () => Promise<{ ok: true; repo: Repo } | { ok: false; error: string }>;
  readonly store: WorktreeStore;
  readonly sessionId: string;
  readonly participantId: string;
  readonly runId: string;
  readonly now: () => string;
  /** Untracked workspace files never committed into the repository (the rules' secret paths: snapshot.ts). */
  readonly leaveOut: (workspacePath: string) => boolean;
}

export type Isolated =
  | { readonly ok: true; readonly record: WorktreeRecord; readonly how: 'created' | 'continued' | 'refreshed' | 'rebased' }
  | { readonly ok: false; readonly error: string; readonly kind: 'no-repository' | 'failed' };

/** The git directory of a linked worktree (its `.git` file names it). */
export async function worktreeGitDir(path: string): Promise<string> {
  const text = await readFile(join(path, '.git'), 'utf8');
  const match = /^gitdir: (.+)$/m.exec(text);
  if (!match) throw new Error(`${path}/.git names no git directory`);
  const dir = match[1]!.trim();
  return isAbsolute(dir) ? dir : resolve(path, dir);
}

export async function worktreePlace(record: Pick<WorktreeRecord, 'path'>): Promise<GitPlace> {
  return { gitDir: await worktreeGitDir(record.path), workTree: record.path };
}

/**
 * The worktree `sessionId` works in (docs/worktrees.md), made or brought up to date now:
 * - none yet (or its folder is gone): the workspace as it is, uncommitted and untracked (not
 *   ignored) files included, is committed through a temporary index (the user's index,
 *   branches and stash are not touched) and checked out as branch `legion/<session-id>` in
 *   `.legion/worktrees/<session-id>/`;
 * - still working: the same worktree, as the agent left it;
 * - merged or rejected: the worktree is reset to the workspace as it is now (the branch keeps
 *   the earlier work in its history);
 * - conflict: rebased — the worktree gets the three-way merge of its work with the workspace
 *   now, conflict markers included, and the agent resolves them.
 * A workspace that is not in a git repository gets an error value.
 */
export async function isolate(request: IsolateRequest, conflictTree?: { ours: string; merged: string }): Promise<Isolated> {
  const found = await request.repo();
  if (!found.ok) return { ok: false, kind: 'no-repository', error: `isolation needs a git repository: ${found.error}` };
  const repo = found.repo;
  try {
    const existing = await request.store.get(request.sessionId);
    const alive = existing && (await stat(join(existing.path, '.git')).then(() => true, () => false));
    if (!existing || !alive) return { ok: true, record: await create(request, repo), how: 'created' };
    if (existing.state === 'working' || existing.state === 'waiting') return { ok: true, record: existing, how: 'continued' };
    const place = await worktreePlace(existing);
    const head = (await gitOut(place, ['rev-parse', 'HEAD'])).trim();
    if (existing.state === 'conflict' && conflictTree) {
      const rebased = (await gitOut(place, ['commit-tree', conflictTree.merged, '-p', head, '-p', conflictTree.ours, '-m', 'legion: rebased onto the workspace (conflicts to resolve)'], { env: LEGION_IDENTITY })).trim();
      await gitOut(place, ['reset', '-q', '--hard', rebased]);
      const record: WorktreeRecord = { ...existing, base: conflictTree.ours, state: 'working', updatedAt: request.now() };
      delete (record as { reason?: string }).reason;
      await request.store.put(record);
      return { ok: true, record, how: 'rebased' };
    }
    const fresh = await workspaceSnapshot(repo, [head], 'legion: the workspace when delegated', request.leaveOut);
    await gitOut(place, ['reset', '-q', '--hard', fresh.commit]);
    const record: WorktreeRecord = { ...existing, base: fresh.commit, state: 'working', updatedAt: request.now() };
    delete (record as { reason?: string }).reason;
    delete (record as { conflicts?: string[] }).conflicts;
    await request.store.put(record);
    return { ok: true, record, how: 'refreshed' };
  } catch (error) {
    return { ok: false, kind: 'failed', error: `could not prepare the worktree: ${messageOf(error)}` };
  }
}

/** Commit the workspace as it is now (parents given), through a temporary index, without the untracked files `leaveOut` names. */
export async function workspaceSnapshot(repo: Repo, parents: readonly string[], message: string, leaveOut: (workspacePath: string) => boolean): Promise<{ commit: string; tree: string }> {
  return snapshotCommit(placeOf(repo), { indexFrom: join(repo.gitDir, 'index'), parents, message, prefix: repo.prefix, leaveOut });
}

async function create(request: IsolateRequest, repo: Repo): Promise<WorktreeRecord> {
  const place = placeOf(repo);
  const snapshot = await workspaceSnapshot(repo, ['HEAD'], 'legion: the workspace when delegated', request.leaveOut);
  const path = request.store.folderOf(request.sessionId);
  await mkdir(request.store.dir, { recursive: true });
  // A folder left from a pruned or lost worktree: git forgets it first (-B resets the branch).
  if (await stat(path).then(() => true, () => false)) {
    await rm(path, { recursive: true, force: true });
    await gitOut(place, ['worktree', 'prune']);
  }
  // Parallel checkout (one worker per core): writing the files is most of the cost (docs/worktrees.md#performance).
  await gitOut(place, ['-c', 'checkout.workers=0', 'worktree', 'add', '--quiet', '-f', '-B', branchOf(request.sessionId), path, snapshot.commit]);
  const record: WorktreeRecord = {
    version: 1,
    sessionId: request.sessionId,
    participantId: request.participantId,
    runId: request.runId,
    branch: branchOf(request.sessionId),
    path,
    root: repo.prefix ? join(path, repo.prefix) : path,
    base: snapshot.commit,
    state: 'working',
    updatedAt: request.now(),
  };
  await request.store.put(record);
  return record;
}
