import { z } from 'zod';
import type { DecidedBy } from '../../events/types';
import { lazySchema } from '../../storage/lazy-schema';

/**
 * Lines of `.legion/runs/<runId>/approvals.jsonl` (docs/design.md#files-on-disk). Append-only:
 * a `request` line opens a request, `reassign` lines move it to another approver
 * (the cascade climbing), one `resolve` line closes it. pending = requested − resolved.
 * Read back through zod (files are a trust boundary).
 */
const decidedBySchema = lazySchema(() =>
  z.custom<DecidedBy>(
    (v) => typeof v === 'string' && (['rule', 'policy', 'llm', 'user', 'headless', 'cancel'].includes(v) || /^(agent|remote):.+/.test(v)),
    { message: 'decidedBy must be rule, policy, llm, user, headless, cancel, agent:<id> or remote:<channel>' },
  ),
);

export const requestLineSchema = lazySchema(() =>
  z.object({
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
  }),
);

export const resolveLineSchema = lazySchema(() =>
  z.object({
    kind: z.literal('resolve'),
    version: z.literal(1).optional(),
    requestId: z.string().min(1),
    decision: z.enum(['approved', 'rejected', 'expired']),
    decidedBy: decidedBySchema(),
    reason: z.string(),
    at: z.string(),
  }),
);

export const reassignLineSchema = lazySchema(() =>
  z.object({
    kind: z.literal('reassign'),
    version: z.literal(1).optional(),
    requestId: z.string().min(1),
    approverId: z.string().min(1),
    at: z.string(),
  }),
);

export const approvalLineSchema = lazySchema(() => z.discriminatedUnion('kind', [requestLineSchema(), resolveLineSchema(), reassignLineSchema()]));

export type RequestLine = z.infer<ReturnType<typeof requestLineSchema>>;
export type ResolveLine = z.infer<ReturnType<typeof resolveLineSchema>>;
export type ReassignLine = z.infer<ReturnType<typeof reassignLineSchema>>;
export type ApprovalLine = z.infer<ReturnType<typeof approvalLineSchema>>;

/** The final state of a request as written in its `resolve` line. */
export type FinalDecision = ResolveLine['decision'];
