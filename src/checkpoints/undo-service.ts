import type { Checkpoint } from './records';
import type { CheckpointStore } from './store';
import type { UndoPlan } from './undo-plan';
import { applyUndo, diffOfPlan, pickCheckpoint, planUndoTo, type UndoNote, type UndoOutcome } from './undo';

/**
 * Undo as front ends use it (`legion undo`, the TUI's checkpoint list; docs/undo.md): list,
 * preview (the plan and its diff), restore. After a restore, each agent whose work was undone is
 * told in its session through `deliver`. A restore is refused while such an agent is still
 * working in that session (`isBusy`): it would build on files that are about to change.
 */
export interface UndoPreview {
  readonly plan: UndoPlan;
  /** Unified diff of the files that will be restored (current → as before the checkpoint). */
  readonly diff: string;
  /** Unified diff of the conflicts (changed by hand since): restored only when confirmed. */
  readonly conflictDiff: string;
}

export interface UndoService {
  /** Checkpoints newest first, of one session when given. */
  list(sessionId?: string): Promise<Checkpoint[]>;
  preview(query: { id?: string; sessionId?: string }): Promise<{ ok: true; preview: UndoPreview } | { ok: false; error: string }>;
  restore(plan: UndoPlan, options: { includeConflicts: boolean }): Promise<UndoOutcome & { undelivered?: readonly UndoNote[] }>;
}

export interface UndoServiceOptions {
  readonly store: CheckpointStore;
  readonly runId: string;
  readonly isBusy: (sessionId: string) => boolean;
  /** Tell an agent; false when its session cannot be reached from here (another run). */
  readonly deliver: (note: UndoNote) => boolean | Promise<boolean>;
}

export function createUndoService(options: UndoServiceOptions): UndoService {
  const { store } = options;
  return {
    async list(sessionId) {
      const all = await store.list();
      return (sessionId ? all.filter((c) => c.sessionId === sessionId) : all).reverse();
    },
    async preview(query) {
      const target = pickCheckpoint(await store.list(), query);
      if (typeof target === 'string') return { ok: false, error: target };
      try {
        const plan = await planUndoTo(store, target);
        const [diff, conflictDiff] = await Promise.all([diffOfPlan(store, plan, plan.restore), diffOfPlan(store, plan, plan.conflicts)]);
        return { ok: true, preview: { plan, diff, conflictDiff } };
      } catch (error) {
        return { ok: false, error: `could not compare with checkpoint ${target.id}: ${error instanceof Error ? error.message : String(error)}` };
      }
    },
    async restore(plan, restoreOptions) {
      const files = restoreOptions.includeConflicts ? [...plan.restore, ...plan.conflicts] : plan.restore;
      const busy = [...new Set(files.flatMap((f) => f.by.map((b) => b.sessionId)))].filter((id) => options.isBusy(id));
      if (busy.length > 0) return { ok: false, error: `${busy.join(', ')} ${busy.length > 1 ? 'are' : 'is'} still working: wait or cancel first, then undo` };
      const outcome = await applyUndo(store, plan, { runId: options.runId, includeConflicts: restoreOptions.includeConflicts });
      if (!outcome.ok) return outcome;
      const undelivered: UndoNote[] = [];
      for (const note of outcome.notes) if (!(await options.deliver(note))) undelivered.push(note);
      return undelivered.length > 0 ? { ...outcome, undelivered } : outcome;
    },
  };
}
