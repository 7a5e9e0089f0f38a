import type { Tool, ToolContext, ToolResult } from '../tools/types';
import { capText } from '../tools/output-cap';
import { createApproverPolicy } from '../authz/approver';
import type { Participant } from '../collective/participant';
import { messageOf } from '../errors';
import type { ApproverPolicy, Authorize, ExecuteTool } from './ports';

/**
 * Stand-ins used when the composition root passes no implementation: a permissive
 * authorizer (the executor already refuses tools the agent does not hold), the approver
 * choice of `authz/approver.ts`, and a plain tool runner.
 */

export const allowGranted: Authorize = () => ({ decision: 'allow', ruleId: null, reason: 'no rules loaded', source: 'default' });

export function approverPolicy(getParticipant: (id: string) => Participant | undefined): ApproverPolicy {
  return createApproverPolicy(getParticipant);
}

/** Validate, run, never throw, cap the output at `toolOutputLimit`. */
export const plainExecuteTool: ExecuteTool = async (tool: Tool, input: unknown, context: ToolContext): Promise<ToolResult> => {
  const parsed = tool.schema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return { content: `invalid input for ${tool.name}: ${issue ? `${issue.path.join('.') || '(input)'}: ${issue.message}` : 'invalid'}`, isError: true };
  }
  try {
    const result = await tool.execute(parsed.data, context);
    const limit = context.limits.toolOutputLimit;
    return result.content.length > limit ? { ...result, content: capText(result.content, limit) } : result;
  } catch (error) {
    return { content: `${tool.name} failed: ${messageOf(error)}`, isError: true };
  }
};
