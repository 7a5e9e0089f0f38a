import { USER_ID } from '../collective/participant';
import type { ApprovalRequest } from '../authz/approvals';
import type { Hub } from './hub';
import { enqueue } from './scheduler';
import { approvalsBlock } from './format';
import { climb } from './approval-route';

/** Session name of the turns that deliver requests to an approver outside the chain. */
export const APPROVALS_SESSION_NAME = 'approvals';

/**
 * Deliver a request to an agent approver that is not waiting on the asker's chain (an
 * explicit approver named by the rule, docs/design.md#authorization, step 4): the core starts a turn for it in
 * `session-user__<approver>__approvals` (initiator the user) whose message lists the
 * request(s) as a communicator result would. Requests routed in the same tick go in one
 * message. What is still undecided and waiting on it when that turn ends (or if it cannot
 * run) climbs to the next approver. While Legion is stopping nothing starts: the request
 * stays pending on disk and is routed again when its turn resumes.
 */
export function deliverOutsideChain(hub: Hub, request: ApprovalRequest): void {
  const approverId = request.approverId;
  const batch = hub.approverInbox.get(approverId);
  if (batch) {
    batch.push(request.requestId);
    return;
  }
  hub.approverInbox.set(approverId, [request.requestId]);
  queueMicrotask(() => {
    const ids = hub.approverInbox.get(approverId) ?? [];
    hub.approverInbox.delete(approverId);
    startApproverTurn(hub, approverId, ids);
  });
}

function waitingOn(hub: Hub, approverId: string, ids: readonly string[]): ApprovalRequest[] {
  const out: ApprovalRequest[] = [];
  for (const id of ids) {
    const record = hub.env.approvals.get(id);
    if (record && !record.outcome && record.request.approverId === approverId) out.push(record.request);
  }
  return out;
}

function startApproverTurn(hub: Hub, approverId: string, ids: readonly string[]): void {
  const requests = waitingOn(hub, approverId, ids);
  if (requests.length === 0 || hub.stopping) return;
  const { slot } = hub.open({ initiatorId: USER_ID, responderId: approverId, name: APPROVALS_SESSION_NAME });
  const chains = requests.map((r) => `- ${r.requestId}: ${r.chain.join(' → ')}`).join('\n');
  const text =
    `You are the approver named by the rule for these requests; they were raised outside your own work.\n` +
    `${approvalsBlock(hub.env.tools, requests)}\nCall chains:\n${chains}`;
  enqueue(hub, slot, {
    text,
    chain: [USER_ID, approverId],
    sessionChain: [slot.handle.id],
    settle: () => {
      if (hub.stopping) return;
      for (const left of waitingOn(hub, approverId, ids)) climb(hub, left);
    },
  });
}
