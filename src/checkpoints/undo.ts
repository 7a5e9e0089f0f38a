import type { CheckpointStore } from './store';
import type { Checkpoint } from './records';
import { diffTrees, unifiedDiff } from './diff';
import { planUndo, type PlannedFile, type UndoPlan } from './undo-plan';
import { applyRestore } from './restore';

/** What the agents whose work was undone are told, one note per session (docs/undo.md). */
export interface UndoNote {
  /** The run of the checkpoint that changed the files (the session lives there). */
  readonly runId: string;
  readonly sessionId: string;
  readonly participantId: string;
  readonly text: string;
}

export type UndoOutcome =
  | { readonly ok: true; readonly checkpointId: string; readonly restored: readonly string[]; readonly kept: readonly string[]; readonly notes: readonly UndoNote[] }
  | { readonly ok: false; readonly error: string };

/** Find a checkpoint: by id, else the latest (of `sessionId` when given). */
export function pickCheckpoint(checkpoints: readonly Checkpoint[], query: { id?: string; sessionId?: string }): Checkpoint | string {
  if (query.id) {
    const found = checkpoints.find((c) => c.id === query.id);
    if (!found) return `no checkpoint ${query.id} (see legion undo --list)`;
    if (query.sessionId && found.sessionId !== query.sessionId) return `checkpoint ${query.id} belongs to ${found.sessionId}, not ${query.sessionId}`;
    return found;
  }
  const candidates = query.sessionId ? checkpoints.filter((c) => c.sessionId === query.sessionId) : checkpoints;
  const latest = candidates[candidates.length - 1];
  if (!latest) return query.sessionId ? `no checkpoints in ${query.sessionId}` : 'no checkpoints yet: nothing to undo';
  return latest;
}

/** Plan undoing to `target`: snapshot the workspace now and sort the files that differ. */
export async function planUndoTo(store: CheckpointStore, target: Checkpoint): Promise<UndoPlan> {
  const checkpoints = await store.list();
  const now = await store.lock.run(() => store.snapshotLocked());
  return planUndo(checkpoints, target, now, (from, to) => diffTrees(store.paths.place, from, to));
}

/** The unified diff of what restoring would do to `files` (current → as before the checkpoint). */
export function diffOfPlan(store: CheckpointStore, plan: UndoPlan, files: readonly PlannedFile[]): Promise<string> {
  return unifiedDiff(store.paths.place, plan.currentTree, plan.target.tree, files.map((f) => f.path));
}

/**
 * Restore the plan's files (and its conflicts when `includeConflicts`), as one checkpointed
 * batch of the user's: undoing it puts them back. Refused when the workspace changed since the plan.
 */
export async function applyUndo(store: CheckpointStore, plan: UndoPlan, options: { runId: string; includeConflicts: boolean }): Promise<UndoOutcome> {
  const files = options.includeConflicts ? [...plan.restore, ...plan.conflicts] : [...plan.restore];
  const kept = options.includeConflicts ? [] : plan.conflicts.map((f) => f.path);
  if (files.length === 0) return { ok: false, error: kept.length > 0 ? 'only files changed by hand differ; confirm to restore them too' : 'nothing to restore: the files are as they were before that checkpoint' };
  const subject = {
    runId: options.runId, sessionId: plan.target.sessionId, participantId: 'user', toolUseIds: [], toolNames: ['undo'],
    turn: 0, restoreOf: plan.target.id,
  };
  let done: { ok: true; id: string } | { ok: false; error: string };
  try {
    done = await store.lock.run(() => store.restoreLocked(subject, plan.currentTree, () => applyRestore(store.paths.place, plan.target.tree, files)));
  } catch (error) {
    return { ok: false, error: `restore failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (!done.ok) return done;
  return { ok: true, checkpointId: done.id, restored: files.map((f) => f.path), kept, notes: notesFor(files) };
}

/** One note per agent session whose work was undone: "the user restored files X, Y to before your turn N". */
export function notesFor(files: readonly PlannedFile[]): UndoNote[] {
  const bySession = new Map<string, { runId: string; sessionId: string; participantId: string; turn: number; paths: string[] }>();
  for (const file of files) {
    for (const owner of file.by) {
      const key = `${owner.runId}\0${owner.sessionId}`;
      const entry = bySession.get(key) ?? { runId: owner.runId, sessionId: owner.sessionId, participantId: owner.participantId, turn: owner.turn, paths: [] };
      entry.turn = Math.min(entry.turn, owner.turn);
      if (!entry.paths.includes(file.path)) entry.paths.push(file.path);
      bySession.set(key, entry);
    }
  }
  return [...bySession.values()].map((e) => ({
    runId: e.runId,
    sessionId: e.sessionId,
    participantId: e.participantId,
    text: `[legion] the user restored files ${listPaths(e.paths)} to before your turn ${e.turn}: what you changed in them from then on is gone; read them again before building on them.`,
  }));
}

function listPaths(paths: readonly string[]): string {
  const shown = paths.slice(0, 10).join(', ');
  return paths.length > 10 ? `${shown} and ${paths.length - 10} more` : shown;
}
