import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LegionConfig } from '../config/schema';
import type { EventBus } from '../events/bus';
import type { BeforeBatch } from '../runtime/ports';
import { messageOf } from '../errors';
import type { CheckpointStore } from '../checkpoints/store';
import type { UndoService } from '../checkpoints/undo-service';
import type { UndoNote } from '../checkpoints/undo';
import { worktreeCheckpointsDir, worktreesWithCheckpoints } from '../worktrees/checkpoints';

/**
 * Checkpoints of one run (docs/undo.md): the runtime hook, undo for the front end, daily pruning.
 * The shadow repository is opened (git set-up, the change watcher over the workspace) by
 * `start()`, which a screen calls once its first frame is out; the first batch and the first
 * undo request call it too and wait for it, so nothing is snapshotted or listed before it.
 * When it cannot be opened, that is said once (a `warn` notice) and each hook call runs the
 * batch without a checkpoint; undo answers with the same reason. An isolated session's batches
 * are checkpointed in a store rooted at its worktree, and undo sees those stores too.
 */
export interface CheckpointParts {
  readonly beforeBatch: BeforeBatch;
  /** Undo for the front end, once the core exists: it reports to the core's sessions. */
  undoFor(core: UndoTarget): UndoService;
  /** Open the store now (idempotent); resolves once it is open or known to have failed. */
  start(): Promise<void>;
  close(): void;
}

/** What undo needs of the core. */
export interface UndoTarget {
  /** Whether an agent is at work in the session. */
  isBusy(sessionId: string): boolean;
  /** The core's `appendNote` (journal.append: scrubbed, persisted, `message-add`). */
  appendNote(sessionId: string, text: string): boolean;
}

const PRUNE_EVERY_MS = 86_400_000;

export function composeCheckpoints(options: {
  readonly config: LegionConfig;
  readonly workspaceRoot: string;
  /** `.legion/worktrees`: isolated sessions keep their checkpoints there (docs/worktrees.md#checkpoints-and-undo). */
  readonly worktreesDir: string;
  readonly runId: string;
  readonly bus: EventBus;
  readonly clock: () => Date;
}): CheckpointParts | undefined {
  const { config, bus, clock } = options;
  if (!config.checkpoints.enabled) return undefined;
  const warn = (message: string, sessionId?: string): void => {
    bus.emit({ type: 'notice', level: 'warn', message, ...(sessionId ? { sessionId } : {}) });
  };
  let closed = false;
  /** A store and its hook; `dir` for an isolated session's worktree (no watcher, no daily pruning: pruned with its worktree). */
  const openOne = async (root: string, dir?: string): Promise<Opened | { readonly error: string }> => {
    // The checkpoint code (git, the watcher, records, undo, pruning) loads here, after the
    // first frame, not with the app (docs/performance.md).
    const [{ openCheckpointStore }, { checkpointHook }] = await Promise.all([import('../checkpoints/store'), import('../checkpoints/hook')]);
    let store: CheckpointStore;
    try {
      store = await openCheckpointStore({
        workspaceRoot: root, ...(dir ? { dir } : {}), maxFileBytes: config.checkpoints.maxFileBytes, watch: !dir, clock, warn: (m) => warn(m),
      });
    } catch (error) {
      const failed = { error: `checkpoints are off ${dir ? `in the worktree ${root}` : 'for this run'}: ${messageOf(error)}` };
      warn(failed.error);
      return failed;
    }
    if (closed) store.close();
    if (!closed && !dir) void pruneWhenDue(store, config, clock, warn);
    return { store, beforeBatch: checkpointHook({ store, runId: options.runId, emit: (event) => bus.emit(event), warn }) };
  };
  let opening: Promise<Opened | { readonly error: string }> | undefined;
  const open = (): Promise<Opened | { readonly error: string }> => (opening ??= openOne(options.workspaceRoot));
  // Isolated sessions' checkpoints are rooted in their worktrees (docs/worktrees.md#checkpoints-and-undo).
  const inWorktrees = new Map<string, Promise<Opened | { readonly error: string }>>();
  const openWorktree = (sessionId: string, root: string): Promise<Opened | { readonly error: string }> => {
    let found = inWorktrees.get(sessionId);
    if (!found) inWorktrees.set(sessionId, found = openOne(root, worktreeCheckpointsDir(options.worktreesDir, sessionId)));
    return found;
  };
  return {
    start: async () => void (await open()),
    beforeBatch: async (batch) => {
      const opened = batch.root !== undefined && batch.root !== options.workspaceRoot ? await openWorktree(batch.sessionId, batch.root) : await open();
      return 'error' in opened ? undefined : opened.beforeBatch(batch);
    },
    undoFor: (core) => undoOver(core),
    close: () => {
      closed = true;
      for (const one of [opening, ...inWorktrees.values()]) {
        void one?.then((opened) => {
          if (!('error' in opened)) opened.store.close();
        });
      }
    },
  };

  function undoOver(core: UndoTarget): UndoService {
    // An undo's report goes to the session it concerns, if it is one of this run, through the core's journal.
    const deliver = (note: UndoNote): boolean => note.runId === options.runId && core.appendNote(note.sessionId, note.text);
    const undoServices = new Map<CheckpointStore, UndoService>();
    const undoOfStore = async (store: CheckpointStore): Promise<UndoService> => {
      const { createUndoService } = await import('../checkpoints/undo-service');
      let found = undoServices.get(store);
      if (!found) undoServices.set(store, found = createUndoService({ store, runId: options.runId, isBusy: (id) => core.isBusy(id), deliver }));
      return found;
    };
    let combined: UndoService | undefined;
    const undoOf = async (): Promise<UndoService | string> => {
      const opened = await open();
      if ('error' in opened) return opened.error;
      const { combinedUndo } = await import('../checkpoints/undo-combined');
      combined ??= combinedUndo(async (sessionId) => {
        const services: UndoService[] = [await undoOfStore(opened.store)];
        for (const found of await worktreesWithCheckpoints(options.worktreesDir, sessionId)) {
          const one = await openWorktree(found.sessionId, found.root);
          if (!('error' in one)) services.push(await undoOfStore(one.store));
        }
        return services;
      });
      return combined;
    };
    return {
      list: async (sessionId) => {
        const undo = await undoOf();
        if (typeof undo === 'string') throw new Error(undo);
        return undo.list(sessionId);
      },
      preview: async (query) => {
        const undo = await undoOf();
        return typeof undo === 'string' ? { ok: false, error: undo } : undo.preview(query);
      },
      restore: async (plan, restoreOptions) => {
        const undo = await undoOf();
        return typeof undo === 'string' ? { ok: false, error: undo } : undo.restore(plan, restoreOptions);
      },
    };
  }
}

interface Opened {
  readonly store: CheckpointStore;
  readonly beforeBatch: BeforeBatch;
}

/** Prune once a day at most (the time of the last one is kept in `.legion/checkpoints/pruned-at`). */
async function pruneWhenDue(store: CheckpointStore, config: LegionConfig, clock: () => Date, warn: (message: string) => void): Promise<void> {
  const marker = join(store.paths.dir, 'pruned-at');
  const last = Date.parse((await readFile(marker, 'utf8').catch(() => '')).trim());
  const now = clock();
  if (Number.isFinite(last) && now.getTime() - last < PRUNE_EVERY_MS) return;
  try {
    // A fresh repository has nothing to prune: start counting the day from now.
    if (!Number.isFinite(last)) return await writeFile(marker, now.toISOString() + '\n', { mode: 0o600 });
    const { pruneCheckpoints } = await import('../checkpoints/prune');
    await pruneCheckpoints(store, { keepDays: config.checkpoints.keepDays, maxRepoBytes: config.checkpoints.maxRepoBytes }, now);
    await writeFile(marker, now.toISOString() + '\n', { mode: 0o600 });
  } catch (error) {
    warn(`checkpoints: pruning failed: ${messageOf(error)}`);
  }
}
