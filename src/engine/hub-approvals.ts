import type { LegionCore } from '../runtime/core-api';
import type { EngineHub } from './hub';

/**
 * The hub's approval commands in engine mode (docs/engine.md#approvals): the queue a front end
 * sees is the hub's own requests plus those waiting on workers; a decision on a worker's
 * request resolves its awakeable through the engine (the worker then records it and the turn
 * goes on, on whichever worker runs it). A decision the engine refuses is said as a notice.
 */
export function hubApprovals(core: Pick<LegionCore, 'resolveApprovals' | 'pendingApprovals'>, hub: EngineHub, notice: (message: string) => void): Pick<LegionCore, 'resolveApprovals' | 'pendingApprovals'> {
  const local = { resolve: core.resolveApprovals.bind(core), pending: core.pendingApprovals.bind(core) };
  return {
    pendingApprovals: () => [...local.pending(), ...hub.pendingApprovals()],
    resolveApprovals(requestIds, decision, options = {}) {
      const remote = requestIds.filter((id) => hub.isRemote(id));
      const own = requestIds.filter((id) => !hub.isRemote(id));
      if (own.length > 0) {
        const result = local.resolve(own, decision, options);
        if (!result.ok) return result;
      }
      for (const requestId of remote) {
        void hub.decide(requestId, {
          decision, ...(options.reason ? { reason: options.reason } : {}), ...(options.allowForSession ? { allowForSession: true } : {}), ...(options.by ? { by: options.by } : {}),
        }).then((sent) => {
          if (!sent.ok) notice(`${requestId}: ${sent.error}`);
        });
      }
      return { ok: true };
    },
  };
}
