import { z } from 'zod';
import { lazySchema } from '../storage/lazy-schema';

// Built at their first use (`lazySchema`, docs/performance.md#the-start-up-snapshot): a start
// whose participant files and templates are the shipped ones takes them from the snapshot
// (`precompileShippedParticipant`, collective/store.ts and templates.ts) and builds none.
export const participantIdSchema = lazySchema(() =>
  z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, 'an id is 1–63 lowercase letters, digits or dashes, starting with a letter or digit'),
);

export const toolAuthorizationSchema = lazySchema(() => z.enum(['auto', 'requires_approval', 'deny']));
export type ToolAuthorization = z.infer<ReturnType<typeof toolAuthorizationSchema>>;

const base = () => ({
  id: participantIdSchema(),
  name: z.string().min(1),
  description: z.string().default(''),
  status: z.enum(['active', 'retired']).default('active'),
});

export const agentSchema = lazySchema(() =>
  z.strictObject({
    ...base(),
    kind: z.literal('agent'),
    systemPrompt: z.string().min(1),
    /** Provider id or 'default' (the run's provider). */
    provider: z.string().default('default'),
    /** Model name or 'default'. */
    model: z.string().default('default'),
    tools: z.array(z.string().min(1)).default([]),
    /** Tool-name glob → policy; can only tighten the rules (docs/design.md#authorization, step 3). */
    toolAuthorizations: z.record(z.string(), toolAuthorizationSchema()).default({}),
    /** Tool-name globs this participant may approve for others ('*' = all, [] = none). */
    approvalAuthority: z.union([z.literal('*'), z.array(z.string())]).default([]),
    /** Its sessions work in a git worktree unless the caller says otherwise (docs/worktrees.md). */
    isolation: z.enum(['worktree', 'none']).optional(),
    createdBy: z.string().optional(),
  }),
);

export const userSchema = lazySchema(() =>
  z.strictObject({
    ...base(),
    kind: z.literal('user'),
    approvalAuthority: z.literal('*').default('*'),
  }),
);

export const participantSchema = lazySchema(() => z.discriminatedUnion('kind', [agentSchema(), userSchema()]));
/** Persisted shape: version added on write. */
export const participantFileSchema = lazySchema(() => z.intersection(participantSchema(), z.object({ version: z.literal(1).optional() })));

export type Agent = z.infer<ReturnType<typeof agentSchema>>;
export type User = z.infer<ReturnType<typeof userSchema>>;
export type Participant = z.infer<ReturnType<typeof participantSchema>>;

export const USER_ID = 'user';
export const UR_AGENT_ID = 'ur-agent';
export const RESOURCE_AGENT_ID = 'resource-agent';
/**
 * Talking is universal (docs/design.md#participants-sessions-runs): an agent spawned without
 * an explicit `tools` list gets these, so every agent can ask others.
 */
export const TALK_TOOLS: readonly string[] = ['communicator', 'list_participants'];
