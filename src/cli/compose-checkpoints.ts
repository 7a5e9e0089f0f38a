import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LegionConfig } from '../config/schema';
import type { EventBus } from '../events/bus';
import type { SessionStore } from '../session/types';
import type { BeforeBatch } from '../runtime/ports';
import { messageOf } from '../errors';
import { openCheckpointStore, type CheckpointStore } from '../checkpoints/store';
import { checkpointHook } from '../checkpoints/hook';
import { createUndoService, type UndoService } from '../checkpoints/undo-service';
import { pruneCheckpoints } from '../checkpoints/prune';
import type { UndoNote } from '../checkpoints/undo';

/** Checkpoints of one run (docs/undo.md): the runtime hook, undo for the front end, daily pruning. */
export interface CheckpointParts {
  readonly beforeBatch: BeforeBatch;
  readonly undo: UndoService;
  close(): void;
}

const PRUNE_EVERY_MS = 86_400_000;

export async function composeCheckpoints(options: {
  readonly config: LegionConfig;
  readonly workspaceRoot: string;
  readonly runId: string;
  readonly bus: EventBus;
  readonly sessions: SessionStore;
  readonly clock: () => Date;
  /** Whether an agent is at work in the session (late-bound: the core is made after this). */
  readonly isBusy: (sessionId: string) => boolean;
}): Promise<CheckpointParts | { readonly error: string } | undefined> {
  const { config, bus, clock } = options;
  if (!config.checkpoints.enabled) return undefined;
  const warn = (message: string, sessionId?: string): void => {
    bus.emit({ type: 'notice', level: 'warn', message, ...(sessionId ? { sessionId } : {}) });
  };
  let store: CheckpointStore;
  try {
    store = await openCheckpointStore({
      workspaceRoot: options.workspaceRoot, maxFileBytes: config.checkpoints.maxFileBytes, watch: true, clock, warn: (m) => warn(m),
    });
  } catch (error) {
    return { error: `checkpoints are off for this run: ${messageOf(error)}` };
  }
  const deliver = (note: UndoNote): boolean => {
    const session = note.runId === options.runId ? options.sessions.get(note.sessionId) : undefined;
    if (!session) return false;
    const message = { role: 'user' as const, content: [{ type: 'text' as const, text: note.text }], at: clock().toISOString() };
    try {
      session.append(message);
    } catch {
      return false;
    }
    bus.emit({ type: 'message-add', sessionId: note.sessionId, message });
    return true;
  };
  void pruneWhenDue(store, config, clock, warn);
  return {
    beforeBatch: checkpointHook({ store, runId: options.runId, emit: (event) => bus.emit(event), warn }),
    undo: createUndoService({ store, runId: options.runId, isBusy: options.isBusy, deliver }),
    close: () => store.close(),
  };
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
    await pruneCheckpoints(store, { keepDays: config.checkpoints.keepDays, maxRepoBytes: config.checkpoints.maxRepoBytes }, now);
    await writeFile(marker, now.toISOString() + '\n', { mode: 0o600 });
  } catch (error) {
    warn(`checkpoints: pruning failed: ${messageOf(error)}`);
  }
}
