import { setTimeout as delay } from 'node:timers/promises';
import { USER_ID } from '../collective/participant';
import { textOf, type Message } from '../model/message';
import type { RunRecord, RunStore } from '../session/types';
import { checkSessionName, DEFAULT_SESSION_NAME, sessionIdOf } from '../session/ids';
import { messageOf } from '../errors';
import type { LegionCore, PendingApproval, SendOutcome, SessionInfo } from './core-api';
import type { EventBus } from '../events/bus';
import type { CollectiveRegistry } from '../collective/registry';
import type { SessionStore } from '../session/types';
import type { ApprovalQueue } from '../authz/approvals';
import type { SecretScrubber } from '../authz/scrub';
import type { Journal } from './journal';
import type { RunState, Slots } from './run-state';
import type { Scheduler } from './scheduler';
import type { AddAllowance, ApprovalsElsewhere } from './ports';
import { answerQuestion } from './user-questions';
import { turnsToLeaveOpen } from './restart';
import type { TurnOutcome } from './turn';
import type { IsolationPrepared } from '../model/isolation';
import type { RunUsage } from './usage-book';
import type { DelegatedTurn } from './delegation';

/** The core as the composition root sees it: `LegionCore` plus what `legion run` needs. */
export interface Core extends LegionCore {
  /** Answer the question waiting in a user lane (`session-<agent>__user__<name>`). */
  reply(sessionId: string, text: string): SendOutcome;
  usage(): RunUsage;
  /** How the last finished turn of a session started by the user ended (undefined before any). */
  lastOutcome(sessionId: string): TurnOutcome | undefined;
  /**
   * Append a note from Legion (an undo's report, docs/undo.md) to a session of this run as a
   * user message, through the journal like every message (scrubbed, persisted, `message-add`).
   * False when the session is unknown or the append fails.
   */
  appendNote(sessionId: string, text: string): boolean;
  /** Make a session's git worktree ready before its message (docs/worktrees.md); absent when isolation is off. */
  prepareIsolation?(sessionId: string, participantId: string, mode: 'worktree' | 'none'): Promise<IsolationPrepared>;
  /**
   * Start a turn another invocation delegated here (engine mode, docs/engine.md#delegation): the
   * caller's message in `session-<caller>__<target>__<name>`, with the caller's chain (its depth
   * and re-entry checks go on from there). Its outcome is `lastOutcome(call.sessionId)`.
   */
  delegated(call: DelegatedTurn): SendOutcome;
}

export function lastAssistantText(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'assistant') {
      const text = textOf(m);
      if (text) return text;
    }
  }
  return '';
}

export interface CommandDeps {
  readonly runId: string;
  readonly bus: EventBus;
  readonly registry: CollectiveRegistry;
  readonly sessions: SessionStore;
  readonly approvals: ApprovalQueue;
  readonly addAllowance?: AddAllowance;
  /** Requests waiting outside this process (engine mode's workers): listed and decided with the core's own. */
  readonly elsewhere?: ApprovalsElsewhere;
  readonly scrub: SecretScrubber;
  readonly state: RunState;
  readonly slots: Slots;
  readonly journal: Journal;
  readonly scheduler: Scheduler;
  readonly runStore?: Pick<RunStore, 'save'>;
  readonly run: RunRecord;
  /** Token and cost totals of the run and its sessions, since the run began. */
  usage(): RunUsage;
  /** Compact a session now (context-hook.ts `createCompactNow`). */
  compact(sessionId: string): Promise<{ ok: true; text: string } | { ok: false; error: string }>;
  /** Worktree isolation's `prepare` (merge-request.ts); absent when isolation is off. */
  readonly prepareIsolation?: Core['prepareIsolation'];
  close(): Promise<void>;
}

/** The command side of the core: every `LegionCore` method over the run state. */
export function createCommands(deps: CommandDeps): Core {
  const { state, slots, journal, scheduler, registry, sessions, approvals } = deps;
  const outcomes = new Map<string, TurnOutcome>();
  let shutdown: Promise<void> | undefined;
  const run = deps.run;

  const saveRun = (): Promise<void> =>
    deps.runStore ? deps.runStore.save(run).catch((error: unknown) => journal.notice('warn', `could not save run.json: ${messageOf(error)}`)) : Promise.resolve();

  const checkTarget = (responderId: string, name: string): string | null => {
    const problem = checkSessionName(name);
    if (problem) return problem;
    if (responderId === USER_ID) return 'you cannot send a message to yourself';
    const target = registry.get(responderId);
    if (!target) return `no participant "${responderId}"`;
    if (target.status !== 'active') return `${responderId} is retired and takes no messages`;
    return null;
  };

  const reply = (sessionId: string, text: string): SendOutcome => {
    const slot = slots.get(sessionId);
    if (!slot) return { ok: false, error: `no session ${sessionId}` };
    if (!text.trim()) return { ok: false, error: 'empty message' };
    const problem = answerQuestion(journal, slot, text);
    return problem ? { ok: false, error: problem } : { ok: true, sessionId, queued: false };
  };

  const core: Core = {
    runId: deps.runId,
    bus: deps.bus,

    send(responderId, text, name = DEFAULT_SESSION_NAME) {
      if (state.stopping) return { ok: false, error: 'Legion is stopping' };
      if (!text.trim()) return { ok: false, error: 'empty message' };
      const problem = checkTarget(responderId, name);
      if (problem) return { ok: false, error: problem };
      // The user writing to an agent that waits on the user's answer in the same-named lane answers it.
      const lane = slots.get(sessionIdOf({ initiatorId: responderId, responderId: USER_ID, name }));
      if (lane && lane.questions.length > 0) return reply(lane.handle.id, text);
      const { slot } = slots.open({ initiatorId: USER_ID, responderId, name });
      const sessionId = slot.handle.id;
      if (!run.title) {
        run.title = deps.scrub.text(text.trim().split('\n', 1)[0]!).slice(0, 80);
        run.updatedAt = journal.now();
        void saveRun();
      }
      const queued = scheduler.enqueue(slot, {
        start: { kind: 'message', text },
        chain: [USER_ID, responderId],
        sessionChain: [sessionId],
        settle: (outcome) => void outcomes.set(sessionId, outcome),
      });
      return { ok: true, sessionId, queued };
    },

    reply,

    delegated(call) {
      if (state.stopping) return { ok: false, error: 'Legion is stopping' };
      const problem = checkTarget(call.responderId, call.name);
      if (problem) return { ok: false, error: problem };
      const key = { initiatorId: call.initiatorId, responderId: call.responderId, name: call.name };
      if (sessionIdOf(key) !== call.sessionId || call.chain.at(-1) !== call.responderId || call.sessionChain.at(-1) !== call.sessionId) {
        return { ok: false, error: `a delegation to ${call.sessionId} that names another session or chain` };
      }
      const { slot } = slots.open(key);
      const queued = scheduler.enqueue(slot, {
        start: { kind: 'message', text: call.text },
        chain: call.chain,
        sessionChain: call.sessionChain,
        settle: (outcome) => void outcomes.set(call.sessionId, outcome),
      });
      return { ok: true, sessionId: call.sessionId, queued };
    },

    usage: () => deps.usage(),
    compact: deps.compact,

    idle(sessionId) {
      const slot = slots.get(sessionId);
      const text = (): string => lastAssistantText(sessions.get(sessionId)?.messages() ?? []);
      if (!slot || !slot.busy) return Promise.resolve(text());
      return new Promise((resolve) => slot.idleWaiters.push(() => resolve(text())));
    },

    lastOutcome: (sessionId) => outcomes.get(sessionId),

    appendNote(sessionId, text) {
      const session = sessions.get(sessionId);
      if (!session) return false;
      try {
        journal.append(session, { role: 'user', content: [{ type: 'text', text }], at: journal.now() });
        return true;
      } catch {
        return false;
      }
    },

    openSession(responderId, name = DEFAULT_SESSION_NAME) {
      const problem = checkTarget(responderId, name);
      if (problem) return { ok: false, error: problem };
      return { ok: true, sessionId: slots.open({ initiatorId: USER_ID, responderId, name }).slot.handle.id };
    },

    resolveApprovals(ids, decision, options = {}) {
      // Requests waiting elsewhere (engine mode) are sent there once this process's own are decided.
      const { elsewhere } = deps;
      const remote = elsewhere ? ids.filter((id) => elsewhere.holds(id)) : [];
      const requestIds = remote.length > 0 ? ids.filter((id) => !remote.includes(id)) : ids;
      if (remote.length === 0 || requestIds.length > 0) {
        const requests = requestIds.map((id) => approvals.get(id)?.request);
        const result = approvals.resolve(requestIds, decision, { decidedBy: options.by ?? 'user', ...(options.reason ? { reason: options.reason } : {}) });
        if (!result.ok) return result;
        if (options.allowForSession && decision === 'approved') {
          for (const request of requests) {
            if (!request) continue;
            const refused = deps.addAllowance ? deps.addAllowance(request) : 'session allowances are not available';
            if (refused) journal.notice('warn', `not allowed for the session: ${refused}`, request.sessionId);
          }
        }
      }
      for (const requestId of remote) elsewhere?.decide(requestId, decision, options);
      return { ok: true };
    },

    cancel(sessionId) {
      const slot = slots.get(sessionId);
      if (slot) scheduler.cancel(slot);
    },

    participants: () => registry.list(),

    sessions() {
      return sessions.list().map((handle): SessionInfo => {
        const slot = state.slots.get(handle.id);
        return {
          id: handle.id,
          initiatorId: handle.key.initiatorId,
          responderId: handle.key.responderId,
          name: handle.key.name,
          status: slot?.status ?? 'idle',
          lastActivity: handle.lastActivity(),
          messageCount: handle.messages().length,
          ...(slot && slot.questions.length > 0 ? { awaitingUser: true } : {}),
        };
      });
    },

    history: (sessionId) => sessions.get(sessionId)?.messages() ?? [],
    contextRecords: (sessionId) => sessions.get(sessionId)?.contextRecords() ?? [],

    pendingApprovals: () => [
      ...approvals.pending().map((r): PendingApproval => ({
        requestId: r.requestId, sessionId: r.sessionId, participantId: r.participantId, chain: r.chain, toolUseId: r.toolUseId,
        toolName: r.toolName, input: r.input, ruleId: r.ruleId, reason: r.reason, approverId: r.approverId, at: r.at,
        ...(r.sandboxed === undefined ? {} : { sandboxed: r.sandboxed }),
      })),
      ...(deps.elsewhere?.pending() ?? []),
    ],

    // A local core is the state itself: it never misses events, so nothing to resync.
    onResync: () => () => undefined,
    onLink: () => () => undefined,

    shutdown(reason) {
      shutdown ??= (async () => {
        state.stopping = true;
        // Batches waiting on approvals (and the callers waiting on them) stay open on disk for the next start.
        state.leftOpen = turnsToLeaveOpen(state.askers, approvals);
        // Close the queue first: waiting requests stay pending on disk for the next process.
        approvals.close();
        for (const slot of state.slots.values()) scheduler.cancel(slot);
        // Turns end promptly once aborted; a tool that ignores its signal is not waited for long.
        await Promise.race([state.drained(), delay(3000, undefined, { ref: false })]);
        run.updatedAt = journal.now();
        await saveRun();
        deps.bus.emit({ type: 'run-end', reason });
        await deps.close();
      })();
      return shutdown;
    },
    ...(deps.prepareIsolation ? { prepareIsolation: deps.prepareIsolation } : {}),
  };
  return core;
}
