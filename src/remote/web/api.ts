import { z } from 'zod';
import type { LegionCore } from '../../runtime/core-api';
import { approvalView, historyView } from './view';

/** What the web page may do to the core: read state, decide approvals, answer a question. */
export type WebCore = Pick<LegionCore, 'runId' | 'bus' | 'sessions' | 'history' | 'pendingApprovals' | 'resolveApprovals' | 'participants'> & Partial<Pick<LegionCore, 'reply'>>;

export type ApiResult = { status: number; body: unknown };

const requestId = z.string().min(1).max(200);

/** POST /api/approvals: decisions by request id, as the TUI's queue makes them (docs/approvals.md). */
export const decisionBody = z.strictObject({
  requestIds: z.array(requestId).min(1).max(200),
  decision: z.enum(['approved', 'rejected']),
  reason: z.string().max(2000).optional(),
});

/** POST /api/reply: the user's answer to an agent's question in a user lane. */
export const replyBody = z.strictObject({
  sessionId: z.string().min(1).max(500),
  text: z.string().min(1).max(100_000),
});

function problem(error: z.ZodError): string {
  const first = error.issues[0];
  return first ? `${first.path.join('.') || 'body'}: ${first.message}` : 'invalid body';
}

export function stateOf(core: WebCore): ApiResult {
  return {
    status: 200,
    body: {
      // The bus position of this snapshot: the page re-applies the events after it that raced the load.
      seq: core.bus.lastSeq(),
      runId: core.runId,
      participants: core.participants().map((p) => ({ id: p.id, name: p.name, kind: p.kind })),
      sessions: core.sessions(),
      pending: core.pendingApprovals().map(approvalView),
    },
  };
}

export function historyOf(core: WebCore, sessionId: string | null): ApiResult {
  if (!sessionId || !core.sessions().some((s) => s.id === sessionId)) return { status: 404, body: { error: 'no such session' } };
  return { status: 200, body: { sessionId, seq: core.bus.lastSeq(), items: historyView(core.history(sessionId)) } };
}

export function decide(core: WebCore, body: unknown): ApiResult {
  const parsed = decisionBody.safeParse(body);
  if (!parsed.success) return { status: 400, body: { error: problem(parsed.error) } };
  const { requestIds, decision, reason } = parsed.data;
  const result = core.resolveApprovals(requestIds, decision, { by: 'remote:web', ...(reason?.trim() ? { reason: reason.trim() } : {}) });
  return result.ok ? { status: 200, body: { ok: true } } : { status: 409, body: { error: result.error } };
}

export function answer(core: WebCore, body: unknown): ApiResult {
  const parsed = replyBody.safeParse(body);
  if (!parsed.success) return { status: 400, body: { error: problem(parsed.error) } };
  if (!core.reply) return { status: 501, body: { error: 'this core cannot take replies' } };
  const result = core.reply(parsed.data.sessionId, parsed.data.text);
  return result.ok ? { status: 200, body: { ok: true } } : { status: 409, body: { error: result.error } };
}
