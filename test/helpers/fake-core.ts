import { createBus, type EventBus } from '../../src/events/bus';
import type { AgentStatus, EventInput, LegionEvent } from '../../src/events/types';
import type { Message } from '../../src/model/message';
import type { Participant } from '../../src/collective/participant';
import type { HistoryService, LegionCore, PendingApproval, SendOutcome, SessionInfo, WorkflowCommands } from '../../src/runtime/core-api';
import { createUsageAccumulator, type UsageTotals } from '../../src/providers/usage-totals';
import { liveHistory } from '../../src/session/history-service';
import { keyArgumentOf } from '../../src/collective/tools/shipped';

/**
 * A `LegionCore` for UI tests: a real bus that the test drives by emitting events, with
 * sessions, histories, statuses and pending approvals kept from those events (as the real
 * core would report them). Commands are recorded; `send` behaves like the core's: it opens
 * the session when new, adds the user's message, and says `queued` when the session is busy.
 * `ask` plays an agent asking the user (as src/runtime/user-questions.ts does) and `reply`
 * answers it like the core's: refused unless a question is open in that lane.
 */
export interface FakeCore extends LegionCore {
  emit(input: EventInput): LegionEvent;
  /** `agentId` asks the user in `session-<agentId>__user__<name>`: session-open, the question, status "waiting for your answer". */
  ask(agentId: string, question: string, name?: string): string;
  reply(sessionId: string, text: string): SendOutcome;
  /** Put a history in place without events (a resumed run). */
  seed(session: { initiatorId: string; responderId: string; name?: string }, messages: readonly Message[]): string;
  readonly calls: {
    readonly send: { responderId: string; text: string; name: string }[];
    readonly reply: { sessionId: string; text: string }[];
    readonly cancel: string[];
    readonly openSession: { responderId: string; name: string }[];
    readonly resolve: { ids: readonly string[]; decision: string }[];
    shutdown: string[];
  };
  /** Replace to make `send` fail. */
  sendError: string | null;
}

export const DEFAULT_PARTICIPANTS: Participant[] = [
  { id: 'user', kind: 'user', name: 'You', description: '', status: 'active', approvalAuthority: '*' },
  agent('ur-agent', 'Ur-agent'),
  agent('resource-agent', 'Resource agent'),
  agent('scribe', 'Scribe'),
  agent('scout', 'Scout'),
];

function agent(id: string, name: string): Participant {
  return {
    id, kind: 'agent', name, description: '', status: 'active', systemPrompt: 'x', provider: 'default', model: 'default',
    tools: [], toolAuthorizations: {}, approvalAuthority: [],
  };
}

export function sessionIdOf(initiatorId: string, responderId: string, name = 'default'): string {
  return `session-${initiatorId}__${responderId}__${name}`;
}

export interface FakeCoreOptions {
  runId?: string;
  participants?: Participant[];
  now?: () => Date;
  /** Totals from before a restart; `usage()` goes on from them with every `usage` event, like the core's. */
  usage?: { run: UsageTotals; sessions: Record<string, UsageTotals> };
}

export function createFakeCore(options: FakeCoreOptions = {}): FakeCore {
  const runId = options.runId ?? 'run-test';
  const bus: EventBus = createBus({ runId, ...(options.now ? { now: options.now } : {}) });
  const sessions = new Map<string, {
    info: Omit<SessionInfo, 'status' | 'lastActivity' | 'messageCount'>; messages: Message[]; status: AgentStatus; last: string; asking?: boolean;
  }>();
  const pending = new Map<string, PendingApproval>();
  const participants = options.participants ?? DEFAULT_PARTICIPANTS;
  const usage = createUsageAccumulator(options.usage);

  const ensure = (id: string, initiatorId: string, responderId: string, name: string, at: string) => {
    let s = sessions.get(id);
    if (!s) sessions.set(id, (s = { info: { id, initiatorId, responderId, name }, messages: [], status: 'idle', last: at }));
    return s;
  };
  bus.subscribeAll((e) => {
    switch (e.type) {
      case 'session-open': ensure(e.sessionId, e.initiatorId, e.responderId, e.name, e.at); break;
      case 'message-add': {
        const s = sessions.get(e.sessionId);
        if (s) { s.messages.push(e.message); s.last = e.at; }
        break;
      }
      case 'agent-status': {
        const s = sessions.get(e.sessionId);
        if (s) { s.status = e.status; s.asking = s.info.responderId === 'user' && e.status !== 'idle' && e.status !== 'error'; }
        break;
      }
      case 'approval-request': {
        const { type: _t, seq: _s, runId: _r, at, ...rest } = e;
        pending.set(e.requestId, { ...rest, chain: [...e.chain], at });
        break;
      }
      case 'approval-resolve': pending.delete(e.requestId); break;
      case 'usage': usage.add(e); break;
      default: break;
    }
  });

  const calls: FakeCore['calls'] = { send: [], reply: [], cancel: [], openSession: [], resolve: [], shutdown: [] };
  const open = (responderId: string, name: string): string => {
    const id = sessionIdOf('user', responderId, name);
    if (!sessions.has(id)) bus.emit({ type: 'session-open', sessionId: id, initiatorId: 'user', responderId, name });
    return id;
  };

  const core: FakeCore = {
    runId,
    bus,
    sendError: null,
    calls,
    emit: (input) => bus.emit(input),
    contextRecords: () => [],
    compact: async () => ({ ok: false, error: 'the fake core does not compact' }),
    seed({ initiatorId, responderId, name = 'default' }, messages) {
      const id = sessionIdOf(initiatorId, responderId, name);
      const s = ensure(id, initiatorId, responderId, name, messages[messages.length - 1]?.at ?? new Date(0).toISOString());
      s.messages.push(...messages);
      return id;
    },
    send(responderId, text, name = 'default') {
      calls.send.push({ responderId, text, name });
      if (core.sendError) return { ok: false, error: core.sendError } satisfies SendOutcome;
      const id = open(responderId, name);
      const queued = sessions.get(id)!.status !== 'idle';
      if (!queued) bus.emit({ type: 'message-add', sessionId: id, message: { role: 'user', content: [{ type: 'text', text }], at: new Date().toISOString() } });
      return { ok: true, sessionId: id, queued };
    },
    ask(agentId, question, name = 'default') {
      const id = sessionIdOf(agentId, 'user', name);
      if (!sessions.has(id)) bus.emit({ type: 'session-open', sessionId: id, initiatorId: agentId, responderId: 'user', name });
      bus.emit({ type: 'message-add', sessionId: id, message: { role: 'user', content: [{ type: 'text', text: question }], at: new Date().toISOString() } });
      bus.emit({ type: 'agent-status', sessionId: id, participantId: 'user', status: 'thinking', detail: 'waiting for your answer' });
      bus.emit({ type: 'notice', level: 'info', message: `${agentId} asks you: ${question}`, sessionId: id });
      return id;
    },
    reply(sessionId, text) {
      calls.reply.push({ sessionId, text });
      const s = sessions.get(sessionId);
      if (!s?.asking) return { ok: false, error: `no question is waiting for your answer in ${sessionId}` };
      bus.emit({ type: 'message-add', sessionId, message: { role: 'assistant', content: [{ type: 'text', text }], at: new Date().toISOString() } });
      bus.emit({ type: 'agent-status', sessionId, participantId: 'user', status: 'idle' });
      return { ok: true, sessionId, queued: false };
    },
    idle: async () => '',
    usage: () => ({ run: usage.run(), sessions: Object.fromEntries(usage.sessions()) }),
    openSession(responderId, name = 'default') {
      calls.openSession.push({ responderId, name });
      return { ok: true, sessionId: open(responderId, name) };
    },
    resolveApprovals(ids, decision) {
      calls.resolve.push({ ids, decision });
      return { ok: true };
    },
    cancel(sessionId) { calls.cancel.push(sessionId); },
    participants: () => participants,
    sessions: () => [...sessions.values()].map((s) => ({
      ...s.info, status: s.status, lastActivity: s.last, messageCount: s.messages.length, ...(s.asking ? { awaitingUser: true } : {}),
    })),
    history: (id) => sessions.get(id)?.messages ?? [],
    pendingApprovals: () => [...pending.values()],
    onResync: () => () => undefined,
    onLink: () => () => undefined,
    async shutdown(reason) { calls.shutdown.push(reason); },
  };
  return core;
}

/** The history service beside a fake core: its run, live (as the real one's, without older runs). */
export function fakeHistory(core: LegionCore): HistoryService {
  return liveHistory(core, keyArgumentOf);
}

/** Workflows beside a fake core that has none: nothing listed, every start refused. */
export const NO_WORKFLOWS: WorkflowCommands = {
  list: async () => [],
  start: async (name) => ({ ok: false, error: `no workflow "${name}"` }),
  cancel: () => false,
};

/** Helpers to emit common event bodies. */
export function text(sessionId: string, participantId: string, chunk: string): EventInput {
  return { type: 'text-delta', sessionId, participantId, text: chunk };
}

export function status(sessionId: string, participantId: string, s: AgentStatus, detail?: string): EventInput {
  return { type: 'agent-status', sessionId, participantId, status: s, ...(detail ? { detail } : {}) };
}

export function assistant(sessionId: string, content: Message['content']): EventInput {
  return { type: 'message-add', sessionId, message: { role: 'assistant', content, at: new Date().toISOString() } };
}

export function userMessage(sessionId: string, content: Message['content'] | string): EventInput {
  const blocks = typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content;
  return { type: 'message-add', sessionId, message: { role: 'user', content: blocks, at: new Date().toISOString() } };
}

export function open(initiatorId: string, responderId: string, name = 'default'): EventInput {
  return { type: 'session-open', sessionId: sessionIdOf(initiatorId, responderId, name), initiatorId, responderId, name };
}
