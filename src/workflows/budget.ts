import type { ApprovalQueue } from '../authz/approvals';
import { USER_ID } from '../collective/participant';
import type { RequestBudget } from './ports';

const money = (n: number): string => `$${n.toFixed(n < 1 ? 4 : 2)}`;
const round = (n: number): number => Math.round(n * 10_000) / 10_000;

/**
 * A reached workflow budget as a budget request (docs/context.md, "Budgets"; docs/workflows.md):
 * `toolName: "budget"`, input `{ budget: "workflowUsd", workflow, spentUsd, limit, raiseBy }`,
 * in the ordinary queue for the user. Headless, it is rejected at once (decidedBy `headless`).
 * A request that cannot be recorded counts as rejected.
 */
export function createRequestBudget(deps: { approvals: Pick<ApprovalQueue, 'raise' | 'resolve' | 'wait'>; headless: boolean }): RequestBudget {
  let ids = 0;
  return async (r, signal) => {
    const text = `budget reached: workflow ${r.name} spent ${money(r.spentUsd)} of its ${money(r.limit)} budgetUsd; approve to raise it by ${money(r.raiseBy)} and start its next steps`;
    let requestId: string;
    try {
      const [request] = deps.approvals.raise([{
        sessionId: r.sessionId, participantId: r.agent, chain: [USER_ID, r.agent], toolUseId: `budget-${r.workflowId}-${Date.now().toString(36)}-${++ids}`,
        toolName: 'budget', input: { budget: 'workflowUsd', workflow: r.name, workflowId: r.workflowId, spentUsd: round(r.spentUsd), limit: round(r.limit), raiseBy: round(r.raiseBy) },
        ruleId: null, reason: text, approverId: USER_ID,
      }]);
      requestId = request!.requestId;
    } catch {
      return 'rejected';
    }
    if (deps.headless) {
      deps.approvals.resolve([requestId], 'rejected', { decidedBy: 'headless', reason: 'budget reached in a headless run' });
      return 'rejected';
    }
    const outcome = await deps.approvals.wait(requestId, signal);
    return outcome.decision === 'approved' ? 'approved' : 'rejected';
  };
}
