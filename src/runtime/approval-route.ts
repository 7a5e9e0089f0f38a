import { USER_ID } from '../collective/participant';
import type { ApprovalRequest } from '../authz/approvals';
import type { Hub } from './hub';
import type { Turn } from './turn';
import { deliverOutsideChain } from './approver-turn';

/**
 * Where an approval request goes (docs/design.md#authorization, step 4 cascade):
 * - the user: the approval queue the UI shows; headless, decided at once per `--approve`
 *   (decidedBy `headless`);
 * - an agent: delivered to the communicator call through which that agent waits on the
 *   asking turn (its result will list the request); a caller on the chain that cannot
 *   answer now (finished, cancelled) is skipped and the request climbs;
 * - an agent outside the chain (an explicit approver): a turn of its own is started to
 *   decide it (approver-turn.ts).
 */
export function routeRequest(hub: Hub, asker: Turn | undefined, request: ApprovalRequest): void {
  if (request.approverId === USER_ID) return toUser(hub, request);
  for (let link = asker?.parent; link; link = link.owner.parent) {
    const owner = link.owner;
    if (owner.agent.id !== request.approverId) continue;
    if (owner.finished || owner.controller.signal.aborted) break;
    link.deliver(request);
    return;
  }
  if (!request.chain.includes(request.approverId)) return deliverOutsideChain(hub, request);
  climb(hub, request);
}

/** Move a request to the next approver up its chain (ending with the user) and route it there. */
export function climb(hub: Hub, request: ApprovalRequest): void {
  const { approvals, approvers } = hub.env;
  const next = approvers.next(request.approverId, { chain: request.chain, toolName: request.toolName }) ?? USER_ID;
  const moved = approvals.reassign(request.requestId, next);
  if (!moved.ok) return; // already decided (or the queue is closing): nothing to route
  const updated = approvals.get(request.requestId)?.request;
  if (updated) routeRequest(hub, hub.askers.get(request.requestId), updated);
}

function toUser(hub: Hub, request: ApprovalRequest): void {
  const headless = hub.env.headless;
  if (!headless) return; // the `approval-request` event put it in the UI's queue
  const approve = headless.approve === 'all';
  hub.env.approvals.resolve([request.requestId], approve ? 'approved' : 'rejected', {
    decidedBy: 'headless',
    reason: approve ? 'approved by --approve all' : 'rejected: no user to ask in a headless run (--approve deny)',
  });
}

/**
 * When an agent's turn ends, what it was asked to decide and left undecided climbs to the
 * next approver (a request never waits on a participant who cannot answer it).
 */
export function climbUnanswered(hub: Hub, turn: Turn): void {
  if (turn.delivered.size === 0) return;
  for (const requestId of turn.delivered) {
    const record = hub.env.approvals.get(requestId);
    if (!record || record.outcome || record.request.approverId !== turn.agent.id) continue;
    climb(hub, record.request);
  }
  turn.delivered.clear();
}

/** Requests handed to `turn`'s agent that it has not decided yet. */
export function undecided(hub: Hub, turn: Turn): ApprovalRequest[] {
  const out: ApprovalRequest[] = [];
  for (const requestId of turn.delivered) {
    const record = hub.env.approvals.get(requestId);
    if (record && !record.outcome && record.request.approverId === turn.agent.id) out.push(record.request);
  }
  return out;
}
