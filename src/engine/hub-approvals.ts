import type { ApprovalsElsewhere } from '../runtime/ports';
import type { EngineHub } from './hub';

/**
 * The requests waiting on the engine's workers, as the hub's core lists and decides them with its
 * own (docs/engine.md#approvals; `CoreOptions.elsewhere`): a decision resolves the request's
 * awakeable through the engine (the worker then records it and the turn goes on, on whichever
 * worker runs it). A decision the engine refuses is said as a notice.
 */
export function approvalsOnWorkers(hub: EngineHub, notice: (message: string) => void): ApprovalsElsewhere {
  return {
    pending: () => hub.pendingApprovals(),
    holds: (requestId) => hub.isRemote(requestId),
    decide(requestId, decision, options) {
      void hub.decide(requestId, {
        decision, ...(options.reason ? { reason: options.reason } : {}), ...(options.allowForSession ? { allowForSession: true } : {}), ...(options.by ? { by: options.by } : {}),
      }).then((sent) => {
        if (!sent.ok) notice(`${requestId}: ${sent.error}`);
      });
    },
  };
}
