import type { ApprovalOutcome, ApprovalQueue, ApprovalRequest, RaiseInput } from '../authz/approvals';
import { personOnly } from '../authz/policy';
import { messageOf } from '../errors';
import { failed, type Batch, type CallAsk } from './call-state';
import type { Journal } from './journal';
import type { ApproverPolicy, AuditSink, Triage } from './ports';
import type { Turn } from './turn';
import { rejectionText } from './format';

/** Phase 2 of a batch: decide every `ask` (each becomes `run` or `done`). */
export type DecideAsks = (turn: Turn, batch: Batch) => Promise<void>;

export interface ApprovalPhaseDeps {
  readonly approvals: ApprovalQueue;
  readonly approvers: ApproverPolicy;
  /** LLM triage, when `escalation.llm.enabled`. */
  readonly triage?: Triage;
  readonly audit: AuditSink;
  readonly notice: Journal['notice'];
  /** The asking turn of each request raised by this process (the router reads it to climb). */
  readonly askers: Map<string, Turn>;
  /** Route a request to its approver (approval-route.ts). */
  route(asker: Turn, request: ApprovalRequest): void;
  /** A tool's own line for its approval requests (MCP: server, tool, annotations; `Tool.approvalNote`). */
  toolNote?(toolName: string): string | undefined;
  /** Count a denial or an allowance (prescan.ts). */
  track(turn: Turn, batch: Batch, toolName: string, outcome: 'denied' | 'allowed'): void;
}

/**
 * Every `ask` of the message, together. Optional LLM triage first (it may only approve, and
 * never what only a person may: personOnly).
 * Then all requests are raised in one batch (persisted, `approval-request` each), the
 * LLM-approved ones resolved at once (decidedBy `llm`), the rest routed to their approver.
 * Resolves when every request is decided; on cancel the queue withdraws what is pending
 * (decidedBy `cancel`) and the calls stay undecided (answered "interrupted" at the batch's
 * end). Each outcome is audited once it is final on disk (a request left pending by a
 * shutdown is not: it is audited when decided or expired after the restart). A call that
 * already has a request (a turn resumed after a restart) is not raised nor triaged again:
 * a pending one is re-offered (`approval-request` again, same id) and routed, a decided one
 * gives its decision.
 */
export function createDecideAsks(deps: ApprovalPhaseDeps): DecideAsks {
  return async (turn, batch) => {
    const asks = batch.of('ask');
    const decisions = await decide(deps, turn, asks);
    for (const [call, outcome] of decisions) {
      if (outcome.decision === 'approved') {
        batch.set({ phase: 'run', use: call.use, tool: call.tool, input: call.input });
        deps.track(turn, batch, call.use.name, 'allowed');
        continue;
      }
      if (turn.controller.signal.aborted) continue;
      batch.end(call.use, failed('rejected', rejectionText(outcome)));
      deps.track(turn, batch, call.use.name, 'denied');
    }
  };
}

async function decide(deps: ApprovalPhaseDeps, turn: Turn, asks: readonly CallAsk[]): Promise<[CallAsk, ApprovalOutcome][]> {
  const { approvals } = deps;
  const signal = turn.controller.signal;
  const sessionId = turn.session.id;
  const participantId = turn.agent.id;
  const fresh = asks.filter((call) => !call.request);

  const reasoning = new Map<CallAsk, { approve: boolean; reasoning: string }>();
  const triage = deps.triage;
  if (triage) {
    // A line only a person may approve is not shown to the triage model at all.
    await Promise.all(fresh.filter((call) => !personOnly(call.verdict)).map(async (call) => {
      try {
        const verdict = call.verdict;
        reasoning.set(call, await triage({ toolName: call.use.name, input: call.input, participantId, chain: turn.chain, ruleId: verdict.ruleId, reason: verdict.reason, sessionId }, signal));
      } catch (error) {
        deps.notice('warn', `LLM triage failed (${messageOf(error)}); asking the approver`, sessionId);
      }
    }));
  }
  if (signal.aborted && fresh.length > 0) {
    // Requests found again are withdrawn by the aborted wait below; nothing new is raised.
    for (const call of asks) if (call.request) approvals.withdraw([call.request.requestId]);
    return asks.map((call) => [call, { decision: 'rejected', decidedBy: 'cancel', reason: 'cancelled' }]);
  }

  const inputs: RaiseInput[] = fresh.map((call) => ({
    sessionId,
    participantId,
    chain: [...turn.chain],
    toolUseId: call.use.id,
    toolName: call.use.name,
    input: call.input,
    ruleId: call.verdict.ruleId,
    reason: withToolNote(call.verdict.reason, deps.toolNote?.(call.use.name)),
    approverId: deps.approvers.choose({ chain: turn.chain, toolName: call.use.name, explicitApprover: call.verdict.approver, personOnly: personOnly(call.verdict) }),
  }));
  let raised: ApprovalRequest[];
  try {
    raised = approvals.raise(inputs);
  } catch (error) {
    const reason = `could not record the approval request: ${messageOf(error)}`;
    deps.notice('error', reason, sessionId);
    for (const call of asks) if (call.request) approvals.withdraw([call.request.requestId], reason);
    return asks.map((call) => [call, { decision: 'rejected', decidedBy: 'rule', reason }]);
  }
  const raisedFor = new Map(fresh.map((call, i) => [call, raised[i]!]));
  const requests = asks.map((call) => call.request ?? raisedFor.get(call)!);
  for (const request of requests) deps.askers.set(request.requestId, turn);
  approvals.reoffer(asks.flatMap((call) => (call.request ? [call.request.requestId] : [])));
  asks.forEach((call, i) => {
    const request = requests[i]!;
    const triaged = reasoning.get(call);
    if (triaged?.approve) {
      approvals.resolve([request.requestId], 'approved', { decidedBy: 'llm', reason: triaged.reasoning || 'approved by LLM triage' });
    } else if (!approvals.get(request.requestId)?.outcome) {
      deps.route(turn, approvals.get(request.requestId)?.request ?? request);
    }
  });

  const outcomes = await Promise.all(requests.map((request) => approvals.wait(request.requestId, signal)));
  return asks.map((call, i) => {
    const request = requests[i]!;
    const outcome = outcomes[i]!;
    deps.askers.delete(request.requestId);
    const triaged = reasoning.get(call);
    if (approvals.get(request.requestId)?.outcome) {
      deps.audit({
        sessionId, participantId, chain: turn.chain, toolName: call.use.name, input: call.input,
        decision: outcome.decision, decidedBy: outcome.decidedBy, ruleId: request.ruleId, reason: outcome.reason,
        requestId: request.requestId, ...(triaged ? { triageReasoning: triaged.reasoning } : {}),
      });
    }
    return [call, outcome];
  });
}

/** The verdict's reason, with the tool's own note for the approver (MCP: server, tool, annotations). */
function withToolNote(reason: string, note: string | undefined): string {
  return note ? `${reason} · ${note}` : reason;
}
