import { z } from 'zod';
import { messageSchema } from '../model/message';
import { participantSchema } from '../collective/participant';
import { contextRecordSchema as contextRecord } from '../context/records';

/** An agent's status on the wire (sessions here, `agent-status` events in event-schemas.ts). */
export const agentStatusSchema = z.enum(['idle', 'thinking', 'running-tool', 'waiting-approval', 'error']);

/**
 * The shapes of the results a client reads (protocol.ts checks the envelope; these check the
 * payload). Each method's entry in method-table.ts names its shape; a result that does not
 * parse is a protocol failure of the server, reported, never trusted (caller.ts).
 */
const count = z.number().int().min(0);
const totals = z.looseObject({
  calls: count, inputTokens: count, outputTokens: count, cacheReadTokens: count, cacheWriteTokens: count,
  costUsd: z.number().nullable(), partial: z.boolean(), unpricedModels: z.array(z.string()),
});
export const sessionInfo = z.looseObject({
  id: z.string(), initiatorId: z.string(), responderId: z.string(), name: z.string(),
  status: agentStatusSchema, lastActivity: z.string(), messageCount: count,
  awaitingUser: z.boolean().optional(),
});
export const pendingApproval = z.looseObject({
  requestId: z.string(), sessionId: z.string(), participantId: z.string(), chain: z.array(z.string()), toolUseId: z.string(),
  toolName: z.string(), input: z.unknown(), ruleId: z.string().nullable(), approverId: z.string(), at: z.string(),
  reason: z.string().optional(), sandboxed: z.boolean().optional(),
});

/** Token and cost totals of the run and of each session (`usage`, and in the snapshot). */
export const runUsage = z.looseObject({ run: totals, sessions: z.record(z.string(), totals) });

export const RESULT_SCHEMAS = {
  snapshot: z.looseObject({
    runId: z.string(), lastSeq: count, participants: z.array(participantSchema()), sessions: z.array(sessionInfo),
    histories: z.record(z.string(), z.array(messageSchema)), contextRecords: z.record(z.string(), z.array(contextRecord)),
    pendingApprovals: z.array(pendingApproval), usage: runUsage,
  }),
  participants: z.array(participantSchema()),
  history: z.array(messageSchema),
  pendingApprovals: z.array(pendingApproval),
  usage: runUsage,
  none: z.null(),
  sessions: z.array(sessionInfo),
  contextRecords: z.array(contextRecord),
  outcome: z.union([z.strictObject({ ok: z.literal(true), sessionId: z.string().optional(), queued: z.boolean().optional(), text: z.string().optional() }), z.strictObject({ ok: z.literal(false), error: z.string() })]),
  text: z.string(),
  lastOutcome: z.union([
    z.null(),
    z.strictObject({ kind: z.literal('done'), text: z.string(), incomplete: z.string().optional() }),
    z.strictObject({ kind: z.literal('failed'), error: z.string() }),
    z.strictObject({ kind: z.literal('interrupted') }),
  ]),
  runs: z.array(z.looseObject({ id: z.string(), createdAt: z.string(), updatedAt: z.string(), title: z.string().optional(), sessionCount: count })),
  runSessions: z.array(z.looseObject({ id: z.string(), initiatorId: z.string(), responderId: z.string(), name: z.string(), messageCount: count, lastActivity: z.string() })),
  transcript: z.array(z.looseObject({ messageIndex: z.number().int(), kind: z.string(), text: z.string() })),
  workflows: z.array(z.looseObject({
    name: z.string(), description: z.string(), steps: z.array(z.string()), inputs: z.array(z.string()), usesInput: z.boolean(),
    file: z.string(), source: z.enum(['project', 'shipped']), budgetUsd: z.number().optional(), error: z.string().optional(),
  })),
  workflowStart: z.union([z.strictObject({ ok: z.literal(true), workflowId: z.string() }), z.strictObject({ ok: z.literal(false), error: z.string() })]),
  search: z.looseObject({
    hits: z.array(z.looseObject({ sessionId: z.string(), messageIndex: z.number().int(), lineIndex: z.number().int(), line: z.string(), ranges: z.array(z.tuple([z.number(), z.number()])) })),
    truncated: z.boolean(), sessionsSearched: count,
  }),
} as const;
