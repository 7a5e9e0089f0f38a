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
