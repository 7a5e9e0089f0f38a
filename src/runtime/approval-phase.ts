import type { ApprovalOutcome, ApprovalRequest, RaiseInput } from '../authz/approvals';
import { messageOf } from '../errors';
import type { Hub } from './hub';
import type { Turn } from './turn';
import type { PlannedCall } from './executor';
import { routeRequest } from './approval-route';

/**
 * Phase 2 of a batch: every `ask` of the message, together.
 * Optional LLM triage first (`escalation.llm.enabled`; it may only approve). Then all
 * requests are raised in one batch (persisted, `approval-request` each), the LLM-approved
 * ones resolved at once (decidedBy `llm`), the rest routed to their approver. Resolves
 * when every request is decided; on cancel the queue withdraws what is pending
 * (decidedBy `cancel`). Each outcome is audited once it is final on disk (a request left
 * pending by a shutdown is not: it is audited when decided or expired after the restart).
 * A call that already has a request (`call.request`: a turn resumed after a restart) is not
 * raised nor triaged again: a pending one is re-offered (`approval-request` again, same id)
 * and routed, a decided one gives its decision.
 */
export async function decideAsks(hub: Hub, turn: Turn, asks: readonly PlannedCall[]): Promise<[PlannedCall, ApprovalOutcome][]> {
  const { env } = hub;
  const signal = turn.controller.signal;
  const sessionId = turn.session.id;
  const participantId = turn.agent.id;
  const fresh = asks.filter((call) => !call.request);

  const triage = env.config.escalation.llm.enabled ? env.triage : undefined;
  const reasoning = new Map<PlannedCall, { approve: boolean; reasoning: string }>();
  if (triage) {
    await Promise.all(fresh.map(async (call) => {
      try {
        const verdict = call.verdict!;
        reasoning.set(call, await triage({ toolName: call.use.name, input: call.input, participantId, chain: turn.chain, ruleId: verdict.ruleId, reason: verdict.reason, sessionId }, signal));
      } catch (error) {
        hub.notice('warn', `LLM triage failed (${messageOf(error)}); asking the approver`, sessionId);
      }
    }));
  }
  if (signal.aborted && fresh.length > 0) {
    // Requests found again are withdrawn by the aborted wait below; nothing new is raised.
    for (const call of asks) if (call.request) env.approvals.withdraw([call.request.requestId]);
    return asks.map((call) => [call, { decision: 'rejected', decidedBy: 'cancel', reason: 'cancelled' }]);
  }

  const inputs: RaiseInput[] = fresh.map((call) => ({
    sessionId,
    participantId,
    chain: [...turn.chain],
    toolUseId: call.use.id,
    toolName: call.use.name,
    input: call.input,
    ruleId: call.verdict!.ruleId,
    reason: call.verdict!.reason,
    approverId: env.approvers.choose({ chain: turn.chain, toolName: call.use.name, explicitApprover: call.verdict!.approver }),
  }));
  let raised: ApprovalRequest[];
  try {
    raised = env.approvals.raise(inputs);
  } catch (error) {
    const reason = `could not record the approval request: ${messageOf(error)}`;
    hub.notice('error', reason, sessionId);
    for (const call of asks) if (call.request) env.approvals.withdraw([call.request.requestId], reason);
    return asks.map((call) => [call, { decision: 'rejected', decidedBy: 'rule', reason }]);
  }
  fresh.forEach((call, i) => void (call.request = raised[i]!));
  const requests = asks.map((call) => call.request!);
  for (const request of requests) hub.askers.set(request.requestId, turn);
  const again = asks.filter((call) => !fresh.includes(call)).map((call) => call.request!.requestId);
  env.approvals.reoffer(again);
  asks.forEach((call, i) => {
    const request = requests[i]!;
    const triaged = reasoning.get(call);
    if (triaged?.approve) {
      env.approvals.resolve([request.requestId], 'approved', { decidedBy: 'llm', reason: triaged.reasoning || 'approved by LLM triage' });
    } else if (!env.approvals.get(request.requestId)?.outcome) {
      routeRequest(hub, turn, env.approvals.get(request.requestId)?.request ?? request);
    }
  });

  const outcomes = await Promise.all(requests.map((request) => env.approvals.wait(request.requestId, signal)));
  return asks.map((call, i) => {
    const request = requests[i]!;
    const outcome = outcomes[i]!;
    hub.askers.delete(request.requestId);
    const triaged = reasoning.get(call);
    if (env.approvals.get(request.requestId)?.outcome) {
      env.audit({
        sessionId, participantId, chain: turn.chain, toolName: call.use.name, input: call.input,
        decision: outcome.decision, decidedBy: outcome.decidedBy, ruleId: request.ruleId, reason: outcome.reason,
        requestId: request.requestId, ...(triaged ? { triageReasoning: triaged.reasoning } : {}),
      });
    }
    return [call, outcome];
  });
}
