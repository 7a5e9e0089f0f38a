import { z } from 'zod';
import type { EventBus } from '../events/bus';
import { agentSchema, TALK_TOOLS, USER_ID, type Agent, type Participant } from './participant';
import type { ParticipantStore } from './store';
import type { GrantGuard } from './grant';
import { messageOf } from '../errors';
import { lazySchema } from '../storage/lazy-schema';

/** Fields of `spawn_agent` (docs/design.md#tools); `modify_agent` takes `id` plus any of the others. */
export const spawnSpecSchema = lazySchema(() =>
  z.strictObject({
    id: agentSchema().shape.id,
    name: z.string().min(1),
    description: z.string().default(''),
    systemPrompt: z.string().min(1),
    provider: z.string().min(1).optional(),
    model: z.string().min(1).optional(),
    tools: z.array(z.string().min(1)).optional(),
    toolAuthorizations: agentSchema().shape.toolAuthorizations.optional(),
    approvalAuthority: agentSchema().shape.approvalAuthority.optional(),
    isolation: agentSchema().shape.isolation,
  }),
);
export type SpawnSpec = z.input<ReturnType<typeof spawnSpecSchema>>;
export const modifySpecSchema = lazySchema(() => spawnSpecSchema().partial().required({ id: true }));
export type ModifySpec = z.input<ReturnType<typeof modifySpecSchema>>;

/**
 * Why a change was refused; the tool result turns it into what to do instead
 * (src/collective/tools/registry-result.ts).
 */
export type RefusalKind =
  | 'caller' | 'invalid-input' | 'exists' | 'not-found' | 'not-agent' | 'retired'
  | 'unknown-tools' | 'grant' | 'protected' | 'save-failed';
export type RegistryResult = { ok: true; participant: Participant } | { ok: false; kind: RefusalKind; error: string };

const refuse = (kind: RefusalKind, error: string): RegistryResult => ({ ok: false, kind, error });

/**
 * The collective in memory over the participant store. Contracts:
 * - An agent spawned without a `tools` list gets TALK_TOOLS (still subject to the grant rules).
 * - A change is written atomically (store.save) before memory changes and before
 *   `participant-change` is emitted; a failed write changes nothing.
 * - A spawned or modified agent is usable at once (the next `get` returns it).
 * - Changes are serialized, so two spawns of one id cannot both succeed.
 * - A retired participant stays listed (status `retired`) and refuses messages.
 */
export interface CollectiveRegistry {
  get(id: string): Participant | undefined;
  /** Every participant, retired included, in id order with `user` first. */
  list(): Participant[];
  spawn(callerId: string, spec: SpawnSpec): Promise<RegistryResult>;
  modify(callerId: string, spec: ModifySpec): Promise<RegistryResult>;
  retire(callerId: string, id: string): Promise<RegistryResult>;
}

export interface RegistryOptions {
  readonly store: ParticipantStore;
  readonly participants: readonly Participant[];
  /** Names of the tools that exist (an agent may not be given an unknown tool). */
  readonly toolNames: () => readonly string[];
  readonly guard: GrantGuard;
  readonly bus?: Pick<EventBus, 'emit'>;
}

export function createRegistry(options: RegistryOptions): CollectiveRegistry {
  const byId = new Map<string, Participant>(options.participants.map((p) => [p.id, p]));
  let chain: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = chain.then(work, work);
    chain = next.catch(() => undefined);
    return next;
  };

  const callerOf = (callerId: string): Participant | RegistryResult => {
    const caller = byId.get(callerId);
    if (!caller) return refuse('caller', `unknown caller "${callerId}"`);
    if (caller.status !== 'active') return refuse('caller', `${callerId} is retired`);
    return caller;
  };
  const isRefusal = (x: Participant | RegistryResult): x is RegistryResult => 'ok' in x;

  const unknownTools = (tools: readonly string[]): string | null => {
    const known = new Set(options.toolNames());
    const bad = tools.filter((t) => !known.has(t));
    if (bad.length === 0) return null;
    return `unknown tool${bad.length > 1 ? 's' : ''} ${bad.map((t) => `"${t}"`).join(', ')} (see list_tools)`;
  };

  const commit = async (participant: Participant, change: 'added' | 'modified' | 'retired'): Promise<RegistryResult> => {
    try {
      await options.store.save(participant);
    } catch (error) {
      return refuse('save-failed', `could not save ${participant.id}: ${messageOf(error)}`);
    }
    byId.set(participant.id, participant);
    options.bus?.emit({ type: 'participant-change', participantId: participant.id, change });
    return { ok: true, participant };
  };

  const firstIssue = (error: z.ZodError): string => {
    const issue = error.issues[0]!;
    return `${issue.path.join('.') || 'input'}: ${issue.message}`;
  };

  return {
    get: (id) => byId.get(id),
    list: () => [...byId.values()].sort((a, b) => (a.id === USER_ID ? -1 : b.id === USER_ID ? 1 : a.id < b.id ? -1 : 1)),

    spawn: (callerId, spec) =>
      serial(async () => {
        const caller = callerOf(callerId);
        if (isRefusal(caller)) return caller;
        const parsed = spawnSpecSchema().safeParse(spec);
        if (!parsed.success) return refuse('invalid-input', firstIssue(parsed.error));
        const existing = byId.get(parsed.data.id);
        if (existing && existing.status === 'active') return refuse('exists', `"${parsed.data.id}" already exists (use modify_agent to change it)`);
        if (existing && existing.kind === 'user') return refuse('exists', `"${parsed.data.id}" is the user`);
        const tools = parsed.data.tools ?? [...TALK_TOOLS];
        const candidate = agentSchema().safeParse({ ...parsed.data, tools, kind: 'agent', status: 'active', createdBy: callerId });
        if (!candidate.success) return refuse('invalid-input', firstIssue(candidate.error));
        const agent = candidate.data;
        const unknown = unknownTools(agent.tools);
        if (unknown) return refuse('unknown-tools', unknown);
        const problem = options.guard.grant(caller, agent, undefined);
        if (problem) return refuse('grant', parsed.data.tools ? problem : `${problem} (an agent spawned without a tools list gets ${TALK_TOOLS.join(' and ')})`);
        return commit(agent, 'added');
      }),

    modify: (callerId, spec) =>
      serial(async () => {
        const caller = callerOf(callerId);
        if (isRefusal(caller)) return caller;
        const parsed = modifySpecSchema().safeParse(spec);
        if (!parsed.success) return refuse('invalid-input', firstIssue(parsed.error));
        const existing = byId.get(parsed.data.id);
        if (!existing) return refuse('not-found', `no participant "${parsed.data.id}" (see list_participants)`);
        if (existing.kind !== 'agent') return refuse('not-agent', `"${existing.id}" is not an agent`);
        if (existing.status !== 'active') return refuse('retired', `"${existing.id}" is retired`);
        const patch = Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined));
        const candidate = agentSchema().safeParse({ ...existing, ...patch });
        if (!candidate.success) return refuse('invalid-input', firstIssue(candidate.error));
        const agent: Agent = candidate.data;
        const unknown = parsed.data.tools ? unknownTools(agent.tools) : null;
        if (unknown) return refuse('unknown-tools', unknown);
        const problem = options.guard.grant(caller, agent, existing);
        if (problem) return refuse('grant', problem);
        return commit(agent, 'modified');
      }),

    retire: (callerId, id) =>
      serial(async () => {
        const caller = callerOf(callerId);
        if (isRefusal(caller)) return caller;
        const target = byId.get(id);
        if (!target) return refuse('not-found', `no participant "${id}" (see list_participants)`);
        if (target.status === 'retired') return refuse('retired', `"${id}" is already retired`);
        const problem = options.guard.retire(caller, target);
        if (problem) return refuse('protected', problem);
        return commit({ ...target, status: 'retired' }, 'retired');
      }),
  };
}
