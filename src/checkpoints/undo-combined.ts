import type { Checkpoint } from './records';
import type { UndoService } from './undo-service';
import { pickCheckpoint } from './undo';

/**
 * Undo over several checkpoint stores as one (docs/worktrees.md#checkpoints-and-undo): the
 * workspace's and the worktrees' of isolated sessions. A checkpoint belongs to exactly one store
 * (ids are unique); the latest of a session is the newest across them (its batches in its
 * worktree, then the merge into the workspace). `servicesFor(sessionId)` gives the services that
 * may hold checkpoints of that session (all of them without one), the workspace's first.
 */
export function combinedUndo(servicesFor: (sessionId?: string) => Promise<readonly UndoService[]>): UndoService {
  const gather = async (sessionId?: string): Promise<{ all: Checkpoint[]; owner: Map<string, UndoService> }> => {
    const owner = new Map<string, UndoService>();
    const all: Checkpoint[] = [];
    for (const service of await servicesFor(sessionId)) {
      for (const checkpoint of await service.list(sessionId)) {
        if (owner.has(checkpoint.id)) continue;
        owner.set(checkpoint.id, service);
        all.push(checkpoint);
      }
    }
    // Oldest first, as a store lists them (pickCheckpoint takes the last).
    all.sort((a, b) => a.at.localeCompare(b.at) || a.id.localeCompare(b.id));
    return { all, owner };
  };
  return {
    async list(sessionId) {
      return (await gather(sessionId)).all.reverse();
    },
    async preview(query) {
      const { all, owner } = await gather(query.sessionId);
      const target = pickCheckpoint(all, query);
      if (typeof target === 'string') return { ok: false, error: target };
      return owner.get(target.id)!.preview({ id: target.id });
    },
    async restore(plan, options) {
      const { owner } = await gather(plan.target.sessionId);
      const service = owner.get(plan.target.id);
      if (!service) return { ok: false, error: `checkpoint ${plan.target.id} is gone (pruned?)` };
      return service.restore(plan, options);
    },
  };
}
