import type { ToolContext, ToolResult } from '../tools/types';
import type { ResolveApprovalInput } from '../collective/tools/deps';
import { mergeConflictOf, type ApprovalQueue, type ApprovalRequest } from '../authz/approvals';
import type { ApprovalsAcross } from './ports';
import type { ToolCatalog } from '../tools/types';
import { keyArgumentText } from '../tools/key-argument';

/**
 * `resolve_approval` of an agent approver: it may decide only requests that wait on it
 * (delivered through its communicator results); decidedBy `agent:<id>`. In engine mode a request
 * may be held for a delegate running elsewhere (`across`): the decision is sent there, where it
 * is recorded the same way.
 */
export function resolveByAgent(deps: { approvals: ApprovalQueue; tools: ToolCatalog; across?: Pick<ApprovalsAcross, 'held' | 'knows' | 'decide'> }, context: ToolContext, input: ResolveApprovalInput): ToolResult {
  const { approvals, tools } = deps;
  const me = context.participantId;
  // Held first: in engine mode this core's queue also holds, from disk, requests other cores raised.
  if (deps.across?.knows(input.requestId)) {
    const held = deps.across.held(input.requestId);
    if (!held) return { content: `${input.requestId} was already decided, or its turn ended`, isError: true };
    return decideHeld(deps.across, tools, held, context, input);
  }
  const record = approvals.get(input.requestId);
  if (!record) return { content: `unknown approval request "${input.requestId}"`, isError: true };
  if (record.outcome) return { content: `${input.requestId} was already ${record.outcome.decision} by ${record.outcome.decidedBy}`, isError: true };
  if (record.request.approverId !== me) {
    return { content: `${input.requestId} waits on ${record.request.approverId}, not on you`, isError: true };
  }
  const result = approvals.resolve([input.requestId], input.decision, {
    decidedBy: `agent:${me}`,
    ...(input.reason?.trim() ? { reason: input.reason.trim() } : {}),
    onlyApprover: me,
  });
  if (!result.ok) return { content: result.error, isError: true };
  const { request } = record;
  const key = keyArgumentText(tools.get(request.toolName), request.input) || undefined;
  return {
    content: `${input.decision} ${request.requestId}: ${request.toolName}${key ? ` ${key}` : ''} by ${request.participantId}`,
    summary: `${input.decision} ${request.requestId}`,
  };
}

/** A held request (engine mode): the same checks and answer as for one in this core's queue. */
function decideHeld(across: Pick<ApprovalsAcross, 'decide'>, tools: ToolCatalog, request: ApprovalRequest, context: ToolContext, input: ResolveApprovalInput): ToolResult {
  const me = context.participantId;
  if (request.approverId !== me) return { content: `${input.requestId} waits on ${request.approverId}, not on you`, isError: true };
  const conflict = input.decision === 'approved' ? mergeConflictOf(request.toolName, request.input) : undefined;
  if (conflict) {
    return { content: `merge request ${input.requestId} conflicts in ${conflict.join(', ')} and cannot be approved (reject it, or message the agent again to rebase): nothing was approved`, isError: true };
  }
  across.decide(input.requestId, { kind: 'decision', decision: input.decision, ...(input.reason?.trim() ? { reason: input.reason.trim() } : {}) }, context.toolUseId);
  const key = keyArgumentText(tools.get(request.toolName), request.input) || undefined;
  return {
    content: `${input.decision} ${request.requestId}: ${request.toolName}${key ? ` ${key}` : ''} by ${request.participantId}`,
    summary: `${input.decision} ${request.requestId}`,
  };
}
