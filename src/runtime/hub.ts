import type { AgentStatus, NoticeLevel } from '../events/types';
import type { Message } from '../model/message';
import type { SessionHandle, SessionKey } from '../session/types';
import { sessionIdOf } from '../session/ids';
import type { RuntimeEnv } from './env';
import type { Turn, TurnRequest } from './turn';
import type { Question } from './user-questions';
import type { ResumeChild } from './resume';
import type { ToolContext } from '../tools/types';

/** Runtime state of one session: its turn queue, the running turn, the responder's status. */
export class SessionSlot {
  readonly queue: TurnRequest[] = [];
  /** Removes the caller-abort listener of a queued request (once it starts or leaves). */
  readonly queueListeners = new Map<TurnRequest, () => void>();
  running: Turn | undefined;
  status: AgentStatus = 'idle';
  statusDetail: string | undefined;
  /** Questions of agents to the user (sessions whose responder is the user), oldest first. */
  readonly questions: Question[] = [];
  readonly idleWaiters: (() => void)[] = [];

  constructor(readonly handle: SessionHandle) {}

  get busy(): boolean {
    return this.running !== undefined || this.queue.length > 0 || this.questions.length > 0;
  }
}

/**
 * The shared state of one core: session slots and event helpers. Every message goes
 * through `append` (persisted, then `message-add`), every status through `setStatus`
 * (emitted on change only), so the UI and the ledger see exactly what is on disk.
 */
export class Hub {
  readonly slots = new Map<string, SessionSlot>();
  /** The asking turn of each approval request raised by this process. */
  readonly askers = new Map<string, Turn>();
  /** Every running turn, for shutdown. */
  readonly running = new Set<Turn>();
  /** Communicator calls of resumed batches → the resumed turn each re-attaches to (resume.ts). */
  readonly reattach = new Map<string, ResumeChild>();
  /** Request ids bound for an approver outside their chain, gathered until the next tick (approver-turn.ts). */
  readonly approverInbox = new Map<string, string[]>();
  /** Set at shutdown: turns whose open batch stays on disk for the next start to resume. */
  keepAtStop: ReadonlySet<Turn> = new Set();
  private turnSeq = 0;
  private drainWaiters: (() => void)[] = [];
  stopping = false;

  constructor(readonly env: RuntimeEnv) {}

  /** Resolves when no turn is running. */
  drained(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  turnEnded(turn: Turn): void {
    this.running.delete(turn);
    if (this.running.size === 0) for (const wake of this.drainWaiters.splice(0)) wake();
  }

  nextTurnId(): number {
    return ++this.turnSeq;
  }

  now(): string {
    return this.env.clock().toISOString();
  }

  /** The slot of an existing session (created lazily for sessions loaded from disk). */
  slot(sessionId: string): SessionSlot | undefined {
    let slot = this.slots.get(sessionId);
    if (slot) return slot;
    const handle = this.env.sessions.get(sessionId);
    if (!handle) return undefined;
    slot = new SessionSlot(handle);
    this.slots.set(sessionId, slot);
    return slot;
  }

  /** Open (or reuse) a session; emits `session-open` when it is new. */
  open(key: SessionKey): { slot: SessionSlot; created: boolean } {
    const id = sessionIdOf(key);
    const existing = this.slot(id);
    if (existing) return { slot: existing, created: false };
    const { session, created } = this.env.sessions.open(key);
    const slot = new SessionSlot(session);
    this.slots.set(id, slot);
    if (created) {
      this.env.bus.emit({ type: 'session-open', sessionId: id, initiatorId: key.initiatorId, responderId: key.responderId, name: key.name });
    }
    return { slot, created };
  }

  /** Persist (secrets scrubbed: what is kept in memory is what is on disk), then emit. */
  append(session: SessionHandle, message: Message): void {
    const stored = this.env.scrub.value(message);
    session.append(stored);
    this.env.bus.emit({ type: 'message-add', sessionId: session.id, message: stored });
  }

  setStatus(slot: SessionSlot, status: AgentStatus, detail?: string): void {
    if (slot.status === status && slot.statusDetail === detail) return;
    slot.status = status;
    slot.statusDetail = detail;
    this.env.bus.emit({
      type: 'agent-status',
      participantId: slot.handle.key.responderId,
      sessionId: slot.handle.id,
      status,
      ...(detail !== undefined ? { detail } : {}),
    });
  }

  /** Services handed to collective tools through `ToolContext.services` (set by the core). */
  services: unknown;

  toolContext(turn: Turn, toolUseId: string): ToolContext {
    const { runtime } = this.env.config;
    return {
      workspaceRoot: this.env.workspaceRoot,
      runId: this.env.runId,
      sessionId: turn.session.id,
      participantId: turn.agent.id,
      chain: turn.chain,
      toolUseId,
      signal: turn.controller.signal,
      limits: { shellTimeoutMs: runtime.shellTimeoutMs, toolOutputLimit: runtime.toolOutputLimit },
      services: this.services,
    };
  }

  notice(level: NoticeLevel, message: string, sessionId?: string): void {
    this.env.bus.emit({ type: 'notice', level, message, ...(sessionId !== undefined ? { sessionId } : {}) });
  }

  /** Wake `idle()` waiters of a slot that has nothing left to do. */
  settleIdle(slot: SessionSlot): void {
    if (slot.busy) return;
    const waiters = slot.idleWaiters.splice(0);
    for (const wake of waiters) wake();
  }
}
