import { z } from 'zod';
import { messageSchema } from '../model/message';
import { agentStatusSchema } from './results';
import type { EventBodies, EventType, LegionEvent } from '../events/types';

/**
 * The body of every event of the event union (docs/design.md#events) as a client checks it when
 * the server pushes it (docs/serve.md#protocol): a front end reads these fields without
 * further checks, so a body with a missing or mistyped field must never reach it. Objects are
 * loose (a newer server may add fields; they pass through), but every field a front end reads
 * is typed. The record is keyed by every `EventType`: a new event type does not compile
 * until it has its schema here.
 */
const id = z.string().min(1);
const count = z.number().int().nonnegative();
const usd = z.number().nonnegative();

const BODY_SCHEMAS: { readonly [T in EventType]: z.ZodType<EventBodies[T]> } = {
  'run-start': z.looseObject({ resumed: z.boolean() }),
  'run-end': z.looseObject({ reason: z.string() }),
  'session-open': z.looseObject({ sessionId: id, initiatorId: id, responderId: id, name: z.string() }),
  'message-add': z.looseObject({ sessionId: id, message: messageSchema }),
  'text-delta': z.looseObject({ sessionId: id, participantId: id, text: z.string(), joined: count.optional() }),
  'tool-call-start': z.looseObject({ sessionId: id, participantId: id, toolUseId: id, name: z.string(), input: z.unknown(), sandboxed: z.boolean().optional() }),
  'tool-call-end': z.looseObject({
    sessionId: id, participantId: id, toolUseId: id, name: z.string(), isError: z.boolean(), summary: z.string(),
    failure: z.enum(['invalid-input', 'denied', 'rejected', 'interrupted', 'failed']).optional(),
  }),
  'approval-request': z.looseObject({
    requestId: id, sessionId: id, participantId: id, chain: z.array(z.string()), toolUseId: id, toolName: z.string(), input: z.unknown(),
    ruleId: z.string().nullable(), approverId: z.string(), reason: z.string().optional(), sandboxed: z.boolean().optional(),
  }),
  'approval-resolve': z.looseObject({
    requestId: id, decision: z.enum(['approved', 'rejected']), reason: z.string(),
    decidedBy: z.custom<EventBodies['approval-resolve']['decidedBy']>((v) => typeof v === 'string' && v.length > 0),
  }),
  'agent-status': z.looseObject({ participantId: id, sessionId: id, status: agentStatusSchema, detail: z.string().optional() }),
  usage: z.looseObject({
    sessionId: id, participantId: id, model: z.string(), inputTokens: count, outputTokens: count, cacheReadTokens: count, cacheWriteTokens: count,
    costUsd: usd.nullable(),
  }),
  'participant-change': z.looseObject({ participantId: id, change: z.enum(['added', 'modified', 'retired']) }),
  notice: z.looseObject({ level: z.enum(['info', 'warn', 'error']), message: z.string(), sessionId: id.optional() }),
  checkpoint: z.looseObject({ checkpointId: id, sessionId: id, participantId: id, toolUseIds: z.array(z.string()), files: z.array(z.string()).optional() }),
  compaction: z.looseObject({
    sessionId: id, participantId: id, kind: z.enum(['eviction', 'summary']), firstKept: count, tokensBefore: count, tokensAfter: count, summary: z.string().optional(),
  }),
  'context-size': z.looseObject({ sessionId: id, participantId: id, tokens: count, window: count }),
  'mcp-status': z.looseObject({ server: z.string(), state: z.enum(['starting', 'ready', 'failed', 'stopped']), tools: z.array(z.string()), error: z.string().optional() }),
  'tool-progress': z.looseObject({ sessionId: id, participantId: id, toolUseId: id, progress: z.number(), total: z.number().optional(), message: z.string().optional() }),
  'workflow-start': z.looseObject({
    workflowId: id, name: z.string(), steps: z.array(z.string()), budgetUsd: usd.optional(), resumed: z.boolean(), ended: z.array(z.string()).optional(), spentUsd: usd.optional(),
  }),
  'workflow-step-start': z.looseObject({ workflowId: id, name: z.string(), stepId: z.string(), agent: z.string(), sessionId: id, resumed: z.boolean() }),
  'workflow-step-end': z.looseObject({
    workflowId: id, name: z.string(), stepId: z.string(), sessionId: id, status: z.enum(['done', 'failed', 'cancelled', 'skipped']), error: z.string().optional(), costUsd: usd,
  }),
  'workflow-end': z.looseObject({
    workflowId: id, name: z.string(), status: z.enum(['done', 'failed', 'cancelled', 'budget']), spentUsd: usd, failed: z.array(z.string()), skipped: z.array(z.string()),
    error: z.string().optional(), output: z.string().optional(),
  }),
};

/**
 * The text deltas (most events by far) are checked by hand, field by field, as their schema
 * would: zod's cost per delta shows in the attached CPU budget (docs/serve.md#performance).
 */
function plainTextDelta(event: Record<string, unknown>): boolean {
  const { sessionId, participantId, text, joined } = event;
  return typeof sessionId === 'string' && sessionId !== '' && typeof participantId === 'string' && participantId !== ''
    && typeof text === 'string' && (joined === undefined || (typeof joined === 'number' && Number.isInteger(joined) && joined >= 0));
}

/** Check the body of a pushed event whose envelope and type were already checked; a message for the one line on failure. */
export function checkEventBody(event: LegionEvent): { ok: true; event: LegionEvent } | { ok: false; error: string } {
  if (event.type === 'text-delta' && plainTextDelta(event as unknown as Record<string, unknown>)) return { ok: true, event };
  const parsed = BODY_SCHEMAS[event.type].safeParse(event);
  if (parsed.success) return { ok: true, event: parsed.data as unknown as LegionEvent };
  const first = parsed.error.issues[0];
  return { ok: false, error: `a ${event.type} event (seq ${event.seq}) is malformed: ${first ? `${first.path.join('.') || '(root)'}: ${first.message}` : 'invalid'}` };
}
