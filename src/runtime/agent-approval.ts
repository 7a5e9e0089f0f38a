import type { ToolContext, ToolResult } from '../tools/types';
import type { ResolveApprovalInput } from '../collective/tools/deps';
import type { ApprovalQueue } from '../authz/approvals';
import type { ToolCatalog } from '../tools/types';
import { keyArgumentText } from '../tools/key-argument';

/**
 * `resolve_approval` of an agent approver: it may decide only requests that wait on it
 * (delivered through its communicator results); decidedBy `agent:<id>`.
 */
export function resolveByAgent(deps: { approvals: ApprovalQueue; tools: ToolCatalog }, context: ToolContext, input: ResolveApprovalInput): ToolResult {
  const { approvals, tools } = deps;
  const me = context.participantId;
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
