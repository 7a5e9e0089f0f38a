import { z } from 'zod';
import type { DecidedBy } from '../../events/types';

/**
 * Lines of `.legion/runs/<runId>/approvals.jsonl` (docs/design.md#files-on-disk). Append-only:
 * a `request` line opens a request, `reassign` lines move it to another approver
 * (the cascade climbing), one `resolve` line closes it. pending = requested − resolved.
 * Read back through zod (files are a trust boundary).
 */
const decidedBySchema = z.custom<DecidedBy>(
  (v) => typeof v === 'string' && (['rule', 'policy', 'llm', 'user', 'headless', 'cancel'].includes(v) || /^(agent|remote):.+/.test(v)),
  { message: 'decidedBy must be rule, policy, llm, user, headless, cancel, agent:<id> or remote:<channel>' },
);

export const requestLineSchema = z.object({
  kind: z.literal('request'),
  version: z.literal(1),
  requestId: z.string().min(1),
  sessionId: z.string().min(1),
  participantId: z.string().min(1),
  chain: z.array(z.string()),
  toolUseId: z.string().min(1),
  toolName: z.string().min(1),
  input: z.unknown(),
  ruleId: z.string().nullable(),
  reason: z.string(),
  approverId: z.string().min(1),
  at: z.string(),
});

export const resolveLineSchema = z.object({
  kind: z.literal('resolve'),
  version: z.literal(1).optional(),
  requestId: z.string().min(1),
  decision: z.enum(['approved', 'rejected', 'expired']),
  decidedBy: decidedBySchema,
  reason: z.string(),
  at: z.string(),
});

export const reassignLineSchema = z.object({
  kind: z.literal('reassign'),
  version: z.literal(1).optional(),
  requestId: z.string().min(1),
  approverId: z.string().min(1),
  at: z.string(),
});

export const approvalLineSchema = z.discriminatedUnion('kind', [requestLineSchema, resolveLineSchema, reassignLineSchema]);

export type RequestLine = z.infer<typeof requestLineSchema>;
export type ResolveLine = z.infer<typeof resolveLineSchema>;
export type ReassignLine = z.infer<typeof reassignLineSchema>;
export type ApprovalLine = z.infer<typeof approvalLineSchema>;

/** The final state of a request as written in its `resolve` line. */
export type FinalDecision = ResolveLine['decision'];
