import { USER_ID } from '../collective/participant';
import type { ApprovalQueue, ApprovalRequest } from '../authz/approvals';
import type { ToolCatalog } from '../tools/types';
import type { Slots } from './run-state';
import type { SessionSlot, TurnRequest } from './turn';
import { approvalsBlock } from './format';

/** Session name of the turns that deliver requests to an approver outside the chain. */
export const APPROVALS_SESSION_NAME = 'approvals';

export interface ApproverTurnDeps {
  readonly approvals: ApprovalQueue;
  readonly tools: ToolCatalog;
  readonly slots: Slots;
  /** Request ids bound for each approver, gathered until the next tick. */
  readonly inbox: Map<string, string[]>;
  isStopping(): boolean;
  /** Queue a turn (the scheduler's `enqueue`, passed in: the scheduler sits above). */
  enqueue(slot: SessionSlot, request: TurnRequest): boolean;
  /** Move a request to the next approver (the router's `climb`). */
  climb(request: ApprovalRequest): void;
}

/**
 * Deliver a request to an agent approver that is not waiting on the asker's chain (an
 * explicit approver named by the rule, docs/design.md#authorization, step 4): the core starts a turn for it in
 * `session-user__<approver>__approvals` (initiator the user) whose message lists the
 * request(s) as a communicator result would. Requests routed in the same tick go in one
 * message. What is still undecided and waiting on it when that turn ends (or if it cannot
 * run) climbs to the next approver. While Legion is stopping nothing starts: the request
 * stays pending on disk and is routed again when its turn resumes.
 */
export function createApproverTurns(deps: ApproverTurnDeps): (request: ApprovalRequest) => void {
  const { approvals, inbox } = deps;

  const waitingOn = (approverId: string, ids: readonly string[]): ApprovalRequest[] => {
    const out: ApprovalRequest[] = [];
    for (const id of ids) {
      const record = approvals.get(id);
      if (record && !record.outcome && record.request.approverId === approverId) out.push(record.request);
    }
    return out;
  };

  const startApproverTurn = (approverId: string, ids: readonly string[]): void => {
    const requests = waitingOn(approverId, ids);
    if (requests.length === 0 || deps.isStopping()) return;
    const { slot } = deps.slots.open({ initiatorId: USER_ID, responderId: approverId, name: APPROVALS_SESSION_NAME });
    const chains = requests.map((r) => `- ${r.requestId}: ${r.chain.join(' → ')}`).join('\n');
    const text =
      `You are the approver named by the rule for these requests; they were raised outside your own work.\n` +
      `${approvalsBlock(deps.tools, requests)}\nCall chains:\n${chains}`;
    deps.enqueue(slot, {
      start: { kind: 'message', text },
      chain: [USER_ID, approverId],
      sessionChain: [slot.handle.id],
      settle: () => {
        if (deps.isStopping()) return;
        for (const left of waitingOn(approverId, ids)) deps.climb(left);
      },
    });
  };

  return (request) => {
    const approverId = request.approverId;
    const batch = inbox.get(approverId);
    if (batch) {
      batch.push(request.requestId);
      return;
    }
    inbox.set(approverId, [request.requestId]);
    queueMicrotask(() => {
      const ids = inbox.get(approverId) ?? [];
      inbox.delete(approverId);
      startApproverTurn(approverId, ids);
    });
  };
}
