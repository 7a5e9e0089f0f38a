import { z } from 'zod';

/**
 * The messages of a session object's `turn` handler (docs/engine.md#the-mapping): what a hub or a
 * delegating caller sends, and what it reads back. Both cross a process boundary: checked.
 */

/** What the hub sends to `LegionSession/<sessionId>/turn` (a trust boundary: checked). */
export const turnInputSchema = z.strictObject({
  runId: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'not a run id'),
  responderId: z.string().min(1).max(200),
  name: z.string().min(1).max(200),
  text: z.string().max(1_000_000),
  /**
   * A delegation (docs/engine.md#delegation): the calling agent (the session's initiator; absent:
   * the user) and the chain its core had, ending with this responder and this session.
   */
  initiatorId: z.string().min(1).max(200).optional(),
  chain: z.array(z.string().min(1).max(200)).min(2).max(100).optional(),
  sessionChain: z.array(z.string().min(1).max(1000)).min(1).max(100).optional(),
  /**
   * The callers up the chain whose agents decide approvals, each with the mailbox of its waiting
   * call (docs/engine.md#approvals-across-objects), outermost first.
   */
  upstream: z.array(z.strictObject({ participantId: z.string().min(1).max(200), mailbox: z.string().min(1).max(500) })).max(100).optional(),
}).refine((input) => (input.initiatorId === undefined) === (input.chain === undefined) && (input.chain === undefined) === (input.sessionChain === undefined), {
  message: 'a delegation names its initiator, chain and session chain together',
});
export type TurnInput = z.infer<typeof turnInputSchema>;

/** What `turn` answers (the hub and a delegating caller read it back: checked). */
export const turnOutcomeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('done'), text: z.string(), incomplete: z.string().optional(), merge: z.string().optional() }),
  z.object({ kind: z.literal('failed'), error: z.string(), merge: z.string().optional() }),
  z.object({ kind: z.literal('interrupted') }),
]);

/** What a delegate posts to a caller's mailbox (mailbox.ts): a request for the caller's agent, and the awakeable its answer goes to. */
export const mailItemSchema = z.object({
  awakeable: z.string().min(1).max(500),
  request: z.object({
    requestId: z.string().min(1).max(200),
    sessionId: z.string().min(1).max(1000),
    participantId: z.string().min(1).max(200),
    chain: z.array(z.string()).max(100),
    toolUseId: z.string().max(500),
    toolName: z.string().min(1).max(500),
    input: z.unknown(),
    ruleId: z.string().nullable(),
    reason: z.string(),
    approverId: z.string().min(1).max(200),
    at: z.string(),
    sandboxed: z.boolean().optional(),
  }),
});
export type MailItem = z.infer<typeof mailItemSchema>;

/** An answer sent back to a delegate's awakeable (ports.ts `RemoteAnswer`). */
export const remoteAnswerSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('decision'), decision: z.enum(['approved', 'rejected']), reason: z.string().max(10_000).optional() }),
  z.object({ kind: z.literal('climb') }),
]);
