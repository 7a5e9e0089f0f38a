import { diffTrees, NO_MODE, ZERO_BLOB } from './diff';
import type { Checkpoint } from './records';

/**
 * What undoing to a checkpoint would do (docs/undo.md). Every file that differs between the
 * checkpoint's `before` tree and the workspace now is either
 * - `restore`: the checkpointed batches from the target on left it exactly as it is now, so it
 *   goes back to how it was before the target batch; or
 * - `conflict`: it was changed by something else since (by hand, a batch that never finished):
 *   kept as it is unless the user confirms restoring it too.
 */
export interface PlannedFile {
  readonly path: string;
  /** What restoring does to it: `delete` a file created since, `recreate` one deleted since, `revert` its bytes or mode. */
  readonly action: 'delete' | 'recreate' | 'revert';
  /** The checkpoints (batches) that changed it, oldest first. */
  readonly by: readonly { readonly checkpointId: string; readonly runId: string; readonly sessionId: string; readonly participantId: string; readonly turn: number }[];
}

export interface UndoPlan {
  readonly target: Checkpoint;
  /** The workspace tree the plan was made against (a restore re-checks it). */
  readonly currentTree: string;
  readonly restore: readonly PlannedFile[];
  readonly conflicts: readonly PlannedFile[];
}

export type TreeDiff = (from: string, to: string) => ReturnType<typeof diffTrees>;

/** Plan undoing to `target` (one of `checkpoints`, oldest first) from the workspace tree `currentTree`. */
export async function planUndo(checkpoints: readonly Checkpoint[], target: Checkpoint, currentTree: string, diff: TreeDiff): Promise<UndoPlan> {
  const from = checkpoints.findIndex((c) => c.id === target.id);
  // What the finished batches from the target on left each file as, and who changed it.
  const expected = new Map<string, { mode: string; blob: string }>();
  const owners = new Map<string, PlannedFile['by'][number][]>();
  for (const checkpoint of checkpoints.slice(from < 0 ? checkpoints.length : from)) {
    if (!checkpoint.after) continue;
    for (const change of checkpoint.after.files) {
      expected.set(change.path, { mode: change.newMode, blob: change.newBlob });
      if (checkpoint.participantId === 'user' && checkpoint.restoreOf) {
        // A restore is the user's own batch: it counts as expected, not as an agent's work.
        if (!owners.has(change.path)) owners.set(change.path, []);
        continue;
      }
      const list = owners.get(change.path) ?? [];
      list.push({ checkpointId: checkpoint.id, runId: checkpoint.runId, sessionId: checkpoint.sessionId, participantId: checkpoint.participantId, turn: checkpoint.turn });
      owners.set(change.path, list);
    }
  }
  const restore: PlannedFile[] = [];
  const conflicts: PlannedFile[] = [];
  for (const change of await diff(target.tree, currentTree)) {
    const action: PlannedFile['action'] = change.oldMode === NO_MODE ? 'delete' : change.newMode === NO_MODE ? 'recreate' : 'revert';
    const now = { mode: change.newMode, blob: change.newMode === NO_MODE ? ZERO_BLOB : change.newBlob };
    const want = expected.get(change.path);
    const file: PlannedFile = { path: change.path, action, by: owners.get(change.path) ?? [] };
    if (want && want.mode === now.mode && want.blob === now.blob) restore.push(file);
    else conflicts.push(file);
  }
  return { target, currentTree, restore, conflicts };
}
