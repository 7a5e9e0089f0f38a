import { readdir, rm } from 'node:fs/promises';
import { messageOf } from '../errors';
import { applyMerge, blobsOf, journalOf, mergeOps, readBlobs, recoverMerges, type ApplyHooks } from './apply';
import { isolate, worktreePlace, type Isolated } from './create';
import { worktreeCheckpointsDir } from './checkpoints';
import { checkMerge, collectWork, mergeWith, workspaceAt, type MergeCheck, type Work } from './merge';
import { findRepo, git, placeOf, type Repo } from './repo';
import { FINISHED_STATES, worktreeStore, type WorktreeRecord, type WorktreeState } from './store';
import { surelyAbsent } from '../storage/absent';

/**
 * Worktree isolation of one workspace (docs/worktrees.md): the worktrees of isolated sessions,
 * their merge requests' content, applying or discarding them. The runtime reaches it through
 * this interface (passed in by the composition root).
 */
export interface Worktrees {
  /** Make, continue, refresh or rebase the worktree of a session (see create.ts `isolate`). */
  isolate(sessionId: string, participantId: string): Promise<Isolated>;
  /** Where a session's tools are rooted, when it is isolated (synchronous: asked for every tool call). */
  rootOf(sessionId: string): string | undefined;
  /** The session's work since its base, committed on its branch; null: nothing changed. State → `waiting`. */
  collect(sessionId: string): Promise<Work | null>;
  /** A three-way merge of that work with the workspace now, on paper. */
  check(sessionId: string, work: Work): Promise<MergeCheck>;
  /**
   * `collect` then `check`, as the end of a turn needs them, faster: the workspace is snapshotted
   * while the worktree is (the two do not depend on each other). Null: nothing changed.
   */
  collectChecked(sessionId: string): Promise<{ work: Work; check: MergeCheck } | null>;
  /** Apply a clean merge to the working tree (journaled). State → `merged`. */
  apply(sessionId: string, merge: Extract<MergeCheck, { kind: 'clean' }>, hooks?: ApplyHooks): Promise<{ ok: true } | { ok: false; error: string }>;
  /**
   * Check and apply as one step, one merge of the workspace at a time (two approvals at once
   * must not both merge against the same workspace). `before` runs once the merge is known to be
   * clean, before any file changes (the checkpoint); the function it returns runs after.
   */
  merge(sessionId: string, work: Work, before?: () => Promise<(() => Promise<void>) | undefined>): Promise<
    | { kind: 'merged' }
    | { kind: 'failed'; error: string }
    | Extract<MergeCheck, { kind: 'conflict' }>
  >;
  /** Record the outcome of a request that did not merge. */
  settle(sessionId: string, state: Extract<WorktreeState, 'rejected' | 'working'>, reason?: string): Promise<void>;
  /** Record a conflict (kept for the rebase the next message to the session starts). */
  conflict(sessionId: string, merge: Extract<MergeCheck, { kind: 'conflict' }>): Promise<void>;
  list(): Promise<WorktreeRecord[]>;
  /** Remove finished worktrees (merged, rejected) with their branches and checkpoints; returns the sessions pruned. */
  prune(): Promise<string[]>;
  /** Finish merges a killed process left half done; returns their sessions. */
  recover(): Promise<string[]>;
  /**
   * At start: finish half-done merges (`recover`) and root again the sessions of this run that
   * were isolated (a resumed run). Without `.legion/worktrees/` it only reads that folder.
   */
  start(): Promise<{ recovered: string[] }>;
  /** At shutdown: background index refreshes cancelled, or awaited when already running. */
  stop(): Promise<void>;
}

/** After a checkout, how long before the worktree's index is refreshed: past the second its files were written in. */
export const INDEX_WARM_DELAY_MS = 1_500;

export interface WorktreesOptions {
  readonly workspaceRoot: string;
  /** `.legion/worktrees` */
  readonly dir: string;
  readonly runId: string;
  readonly now: () => string;
  /**
   * Untracked workspace files never committed into the repository by a snapshot: the rules'
   * secret paths (`secretPathMatcher`), which the read-only `git log -p --all` would print.
   */
  readonly leaveOut: (workspacePath: string) => boolean;
}

export function createWorktrees(options: WorktreesOptions): Worktrees {
  const store = worktreeStore(options.dir);
  const roots = new Map<string, string>();
  // The repository, found once (a `git rev-parse`); not found is asked again next time (the user may `git init`).
  let repoFound: Promise<{ ok: true; repo: Repo }> | undefined;
  const findOnce = async (): Promise<{ ok: true; repo: Repo } | { ok: false; error: string }> => {
    if (repoFound) return repoFound;
    const found = await findRepo(options.workspaceRoot);
    if (found.ok) repoFound ??= Promise.resolve(found);
    return found;
  };
  const repo = async (): Promise<Repo> => {
    const found = await findOnce();
    if (!found.ok) throw new Error(found.error);
    return found.repo;
  };
  const record = async (sessionId: string): Promise<WorktreeRecord> => {
    const found = await store.get(sessionId);
    if (!found) throw new Error(`${sessionId} has no worktree`);
    return found;
  };
  const update = async (sessionId: string, change: Partial<WorktreeRecord>): Promise<WorktreeRecord> => {
    const next = { ...(await record(sessionId)), ...change, updatedAt: options.now() };
    await store.put(next);
    return next;
  };

  const recover = async (): Promise<string[]> => {
    if (surelyAbsent(options.dir) || !(await readdir(options.dir).catch(() => [] as string[])).some((n) => n.endsWith('.merge.json'))) return [];
    const r = await repo();
    const done = await recoverMerges(placeOf(r), options.workspaceRoot, options.dir);
    for (const sessionId of done) if (await store.get(sessionId)) await update(sessionId, { state: 'merged', conflicts: undefined, rebase: undefined });
    return done;
  };

  const apply: Worktrees['apply'] = async (sessionId, merge, hooks) => {
    try {
      const r = await repo();
      const place = placeOf(r);
      // `git cat-file` starts while `diff-tree` lists the operations (one process start off the path).
      const listed = mergeOps(place, r.prefix, merge.ours, merge.merged);
      const blobs = readBlobs(place, listed.then(blobsOf));
      blobs.catch(() => undefined);
      const ops = await listed;
      await applyMerge(place, options.workspaceRoot, journalOf(options.dir, sessionId), { version: 1, sessionId, merged: merge.merged, ops }, hooks, blobs);
      await update(sessionId, { state: 'merged', conflicts: undefined, rebase: undefined, reason: undefined });
      return { ok: true };
    } catch (error) {
      return { ok: false, error: messageOf(error) };
    }
  };

  let mergeChain: Promise<unknown> = Promise.resolve();
  const serial = <T>(task: () => Promise<T>): Promise<T> => {
    const next = mergeChain.then(task, task);
    mergeChain = next.catch(() => undefined);
    return next;
  };

  // Index warm-up (docs/worktrees.md#performance): a checkout writes the worktree's files and its
  // index within the same second, so git cannot trust the index's file times ("racily clean") and
  // re-reads every file at the next `git add -A` — the end-of-turn collect paid that for all
  // 10,000 files. Once a second has passed, `update-index --refresh` records the times (a file
  // changed meanwhile is re-read and stays dirty, as in `git status`). It runs in the background
  // during the agent's turn; whatever next touches the worktree first waits for it or cancels it.
  const warming = new Map<string, { timer?: NodeJS.Timeout; running?: Promise<unknown> }>();
  const warmLater = (item: WorktreeRecord): void => {
    const entry: { timer?: NodeJS.Timeout; running?: Promise<unknown> } = {};
    entry.timer = setTimeout(() => {
      entry.timer = undefined;
      entry.running = worktreePlace(item).then((place) => git(place, ['update-index', '-q', '--refresh'])).catch(() => undefined);
    }, INDEX_WARM_DELAY_MS);
    entry.timer.unref();
    warming.set(item.sessionId, entry);
  };
  const settleWarm = async (sessionId: string): Promise<void> => {
    const entry = warming.get(sessionId);
    if (!entry) return;
    warming.delete(sessionId);
    if (entry.timer) clearTimeout(entry.timer);
    await entry.running;
  };

  return {
    // One at a time, with merges: parallel sessions snapshot the same workspace and add worktrees to one repository.
    isolate: (sessionId, participantId) => serial(async () => {
      await settleWarm(sessionId);
      const existing = await store.get(sessionId);
      const result = await isolate({ workspaceRoot: options.workspaceRoot, repo: findOnce, store, sessionId, participantId, runId: options.runId, now: options.now, leaveOut: options.leaveOut }, existing?.rebase);
      if (result.ok) roots.set(sessionId, result.record.root);
      if (result.ok && result.how !== 'continued') warmLater(result.record);
      return result;
    }),
    rootOf: (sessionId) => roots.get(sessionId),
    async collect(sessionId) {
      await settleWarm(sessionId);
      const current = await record(sessionId);
      const work = await collectWork(current, (await repo()).prefix);
      if (work) await update(sessionId, { state: 'waiting' });
      return work;
    },
    async collectChecked(sessionId) {
      await settleWarm(sessionId);
      const current = await record(sessionId);
      const r = await repo();
      const ours = workspaceAt(r, current.base, options.leaveOut);
      ours.catch(() => undefined);
      const work = await collectWork(current, r.prefix);
      if (!work) return null;
      await update(sessionId, { state: 'waiting' });
      return { work, check: await mergeWith(r, await ours, work.commit) };
    },
    async check(sessionId, work) {
      return checkMerge(await repo(), (await record(sessionId)).base, work.commit, options.leaveOut);
    },
    apply,
    merge(sessionId, work, before) {
      return serial(async () => {
        const check = await checkMerge(await repo(), (await record(sessionId)).base, work.commit, options.leaveOut);
        if (check.kind === 'conflict') return check;
        const after = await before?.();
        const applied = await apply(sessionId, check);
        await after?.();
        return applied.ok ? { kind: 'merged' as const } : { kind: 'failed' as const, error: applied.error };
      });
    },
    async settle(sessionId, state, reason) {
      await update(sessionId, { state, ...(reason ? { reason } : {}) });
    },
    async conflict(sessionId, merge) {
      await update(sessionId, { state: 'conflict', conflicts: [...merge.files], rebase: { ours: merge.ours, merged: merge.merged } });
    },
    list: () => store.list(),
    async prune() {
      const pruned: string[] = [];
      const finished = (await store.list()).filter((item) => FINISHED_STATES.has(item.state));
      if (finished.length === 0) return pruned;
      const r = await repo();
      for (const item of finished) {
        await settleWarm(item.sessionId);
        await git(placeOf(r), ['worktree', 'remove', '--force', item.path]);
        await rm(item.path, { recursive: true, force: true });
        await rm(worktreeCheckpointsDir(options.dir, item.sessionId), { recursive: true, force: true });
        await git(placeOf(r), ['branch', '-D', item.branch]);
        await store.remove(item.sessionId);
        roots.delete(item.sessionId);
        pruned.push(item.sessionId);
      }
      await git(placeOf(r), ['worktree', 'prune']);
      return pruned;
    },
    async start() {
      const records = await store.list();
      for (const item of records) if (item.runId === options.runId) roots.set(item.sessionId, item.root);
      return { recovered: await recover() };
    },
    recover,
    async stop() {
      await Promise.all([...warming.keys()].map((sessionId) => settleWarm(sessionId)));
    },
  };
}
