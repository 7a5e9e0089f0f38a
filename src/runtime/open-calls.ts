import { EXPIRED_REASON, type ApprovalQueue } from '../authz/approvals';
import { toolUsesOf, type ToolResultBlock } from '../model/message';
import { INTERRUPTED_RESULT } from '../model/repair';
import type { SessionHandle, SessionStore } from '../session/types';
import type { ResumeChild } from './call-state';
import type { Journal } from './journal';
import type { AuditSink } from './ports';

/** Answer the open tool_uses of the last message, if any (keeps the history valid: every call answered). */
export function answerOpenCalls(journal: Pick<Journal, 'append' | 'now'>, session: SessionHandle, reason: string): void {
  const messages = session.messages();
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'assistant') return;
  const uses = toolUsesOf(last);
  if (uses.length === 0) return;
  const content: ToolResultBlock[] = uses.map((u) => ({ type: 'tool_result', toolUseId: u.id, content: reason, isError: true }));
  journal.append(session, { role: 'user', content, at: journal.now() });
}

export interface ExpiryDeps {
  readonly approvals: ApprovalQueue;
  readonly audit: AuditSink;
}

/** The audit line of a request that expired (its turn will not resume). */
export function auditExpired(deps: ExpiryDeps, requestId: string): void {
  const request = deps.approvals.get(requestId)?.request;
  if (!request) return;
  deps.audit({
    sessionId: request.sessionId, participantId: request.participantId, chain: request.chain, toolName: request.toolName, input: request.input,
    decision: 'expired', decidedBy: 'cancel', ruleId: request.ruleId, reason: EXPIRED_REASON, requestId,
  });
}

/**
 * A resumed child that will not run after all (its caller was cancelled, or the call is now
 * refused): answer its open calls and those below it "interrupted", expire their requests.
 */
export function abandon(deps: ExpiryDeps & { sessions: SessionStore; journal: Pick<Journal, 'append' | 'now'> }, child: ResumeChild): void {
  const session = deps.sessions.get(child.sessionId);
  if (session) answerOpenCalls(deps.journal, session, INTERRUPTED_RESULT);
  const expired = deps.approvals.expire([...child.point.requests.values()].map((r) => r.requestId));
  for (const requestId of expired) auditExpired(deps, requestId);
  for (const below of child.point.children.values()) abandon(deps, below);
}
