import type { EventInput } from '../events/types';
import type { Message } from '../model/message';
import { messageOf } from '../errors';
import { turnNumber } from './policy';
import type { CheckpointStore } from './store';

/** A batch about to run, as the runtime passes it (runtime/ports.ts `BatchToRun` is this type). */
export interface CheckpointBatch {
  readonly sessionId: string;
  readonly participantId: string;
  /** The tree the batch acts in when it is not the workspace: an isolated session's worktree (docs/worktrees.md). */
  readonly root?: string;
  /** `changesFiles`: the call may change the workspace's files (its tool's metadata, tools/types.ts `mayChangeFiles`). */
  readonly calls: readonly { readonly toolUseId: string; readonly name: string; readonly changesFiles: boolean }[];
  /** The session's history so far. */
  readonly messages: readonly Message[];
}
export type CheckpointHook = (batch: CheckpointBatch) => Promise<(() => Promise<void>) | undefined>;

/**
 * The runtime's checkpoint hook (docs/undo.md): before a batch with a call that may change the
 * workspace, a checkpoint (`checkpoint` event); once the batch ended, a second snapshot records
 * the files it changed (`checkpoint` event with `files`). A failing snapshot never stops the
 * batch: it is told as a warning and the batch runs without a checkpoint.
 */
export function checkpointHook(options: {
  readonly store: CheckpointStore;
  readonly runId: string;
  readonly emit: (event: EventInput) => void;
  readonly warn: (message: string, sessionId: string) => void;
}): CheckpointHook {
  const { store, runId, emit, warn } = options;
  return async (batch) => {
    const changing = batch.calls.filter((c) => c.changesFiles);
    if (changing.length === 0) return undefined;
    const { sessionId, participantId } = batch;
    const toolUseIds = changing.map((c) => c.toolUseId);
    let open: Awaited<ReturnType<CheckpointStore['begin']>>;
    try {
      open = await store.begin({
        runId, sessionId, participantId, toolUseIds, toolNames: changing.map((c) => c.name), turn: turnNumber(batch.messages),
      });
    } catch (error) {
      warn(`checkpoint before ${participantId}'s ${changing.map((c) => c.name).join(', ')} failed, running without one: ${messageOf(error)}`, sessionId);
      return undefined;
    }
    emit({ type: 'checkpoint', checkpointId: open.id, sessionId, participantId, toolUseIds });
    return async () => {
      try {
        const files = await open.finish();
        emit({ type: 'checkpoint', checkpointId: open.id, sessionId, participantId, toolUseIds, files: files.map((f) => f.path) });
      } catch (error) {
        warn(`checkpoint ${open.id}: recording what the batch changed failed: ${messageOf(error)}`, sessionId);
      }
    };
  };
}
