import type { ApprovalRequest } from '../authz/approvals';
import type { Verdict } from '../authz/types';
import type { ToolCatalog, ToolResult } from '../tools/types';
import { keyArgumentText } from '../tools/key-argument';
import { INTERRUPTED_BY_USER, type TurnOutcome } from './turn';

/** Texts the models read. Short, specific, and saying what to do next. */

/** The result text of a call cut short: by the user, or by Legion stopping. */
export function interruptedText(stopping: boolean): string {
  return stopping ? 'interrupted: Legion stopped while this call was pending; ask again' : INTERRUPTED_BY_USER;
}

/** A resumed call whose stored input holds a scrubbed secret (see authz/scrub.ts) is not run with the placeholder. */
export const SECRET_NOT_KEPT = 'interrupted: Legion stopped while this call was pending, and its input held a secret value that is not kept on disk; ask again';

export const MAY_HAVE_RUN = 'interrupted: Legion stopped while this call was running; it may or may not have taken effect — check before doing it again';

export function firstLine(text: string, max = 120): string {
  const line = text.split('\n', 1)[0]!.trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function summaryOf(result: ToolResult): string {
  return result.summary ?? firstLine(result.content);
}

export function describeInputProblem(tool: string, problem: string): string {
  return `invalid input for ${tool}: ${problem}. Call ${tool} again with arguments that match its schema.`;
}

export function verdictDenial(verdict: Verdict): string {
  return `denied${verdict.ruleId ? ` by rule ${verdict.ruleId}` : ''}: ${verdict.reason}`;
}

/** The result text of a call whose approval request was rejected. */
export function rejectionText(outcome: { decidedBy: string; reason?: string }): string {
  return `rejected by ${outcome.decidedBy}${outcome.reason ? `: ${outcome.reason}` : ''}`;
}

export function unavailableTool(name: string, agentId: string, tools: readonly string[]): string {
  return `tool "${name}" is not available to ${agentId}; its tools are: ${tools.length ? tools.join(', ') : '(none)'}`;
}

/** One line per request: id, tool, key argument, who asks, why. */
export function requestLines(tools: ToolCatalog, requests: readonly ApprovalRequest[]): string {
  return requests
    .map((r) => {
      const key = keyArgumentText(tools.get(r.toolName), r.input);
      const line = `- ${r.requestId}: ${r.toolName}${key ? ` ${firstLine(key, 160)}` : ''} (asked by ${r.participantId}; ${r.reason || 'needs approval'})`;
      // A merge request shows its diff to an agent approver (docs/worktrees.md#merge-requests).
      const diff = r.toolName === 'merge' && typeof (r.input as { diff?: unknown } | null)?.diff === 'string' ? (r.input as { diff: string }).diff : '';
      return diff ? `${line}\n  its diff:\n${diff.replace(/^/gm, '    ')}` : line;
    })
    .join('\n');
}

export function approvalsBlock(tools: ToolCatalog, requests: readonly ApprovalRequest[]): string {
  return (
    `Approval requests waiting for your decision:\n${requestLines(tools, requests)}\n` +
    `Decide each with resolve_approval (requestId, decision "approved" or "rejected", reason). ` +
    `Approve only what clearly serves the task you were given; what you leave undecided goes to the next approver when your turn ends.`
  );
}

/** The result text of a finished communicator call. */
export function outcomeText(targetId: string, outcome: TurnOutcome): { content: string; isError: boolean } {
  const merge = outcome.kind !== 'interrupted' && outcome.merge ? `\n\n[worktree] ${outcome.merge}` : '';
  switch (outcome.kind) {
    case 'done': {
      const text = outcome.text.trim() ? outcome.text : `(${targetId} ended its turn without a text answer)`;
      return { content: (outcome.incomplete ? `${text}\n\n[note: ${outcome.incomplete}]` : text) + merge, isError: false };
    }
    case 'failed':
      return { content: `${targetId} could not answer: ${outcome.error}${merge}`, isError: true };
    case 'interrupted':
      return { content: `${targetId}'s turn was interrupted by the user`, isError: true };
    default: {
      const never: never = outcome;
      return never;
    }
  }
}
