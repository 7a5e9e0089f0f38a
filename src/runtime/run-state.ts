import type { EventBus } from '../events/bus';
import type { SessionKey, SessionStore } from '../session/types';
import { sessionIdOf } from '../session/ids';
import { SessionSlot, type Turn } from './turn';

/**
 * The mutable state of one run inside the core: the slots of the sessions, the turns
 * running, and the few maps that connect turns to each other. Functions take the piece
 * they use (e.g. `askers`), never the whole.
 */
export class RunState {
  readonly slots = new Map<string, SessionSlot>();
  /** The asking turn of each approval request raised by this process. */
  readonly askers = new Map<string, Turn>();
  /** Every running turn, for shutdown. */
  readonly running = new Set<Turn>();
  /** Request ids bound for an approver outside their chain, gathered until the next tick (approver-turn.ts). */
  readonly approverInbox = new Map<string, string[]>();
  /** Set at shutdown: turns whose open batch stays on disk for the next start to resume. */
  leftOpen: ReadonlySet<Turn> = new Set();
  stopping = false;
  private turnSeq = 0;
  private drainWaiters: (() => void)[] = [];

  /** Resolves when no turn is running. */
  drained(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  turnStarted(turn: Turn): void {
    this.running.add(turn);
  }

  turnEnded(turn: Turn): void {
    this.running.delete(turn);
    if (this.running.size === 0) for (const wake of this.drainWaiters.splice(0)) wake();
  }

  nextTurnId(): number {
    return ++this.turnSeq;
  }

  /** Legion is stopping and this turn's open batch stays on disk for the next start. */
  isLeftOpen(turn: Turn): boolean {
    return this.stopping && this.leftOpen.has(turn);
  }
}

/** The slots of a run's sessions: looked up (created lazily for sessions loaded from disk) or opened. */
export interface Slots {
  get(sessionId: string): SessionSlot | undefined;
  /** Open (or reuse) a session; emits `session-open` when it is new. */
  open(key: SessionKey): { slot: SessionSlot; created: boolean };
}

export function createSlots(slots: Map<string, SessionSlot>, sessions: SessionStore, bus: EventBus): Slots {
  const get = (sessionId: string): SessionSlot | undefined => {
    let slot = slots.get(sessionId);
    if (slot) return slot;
    const handle = sessions.get(sessionId);
    if (!handle) return undefined;
    slot = new SessionSlot(handle);
    slots.set(sessionId, slot);
    return slot;
  };
  return {
    get,
    open(key) {
      const id = sessionIdOf(key);
      const existing = get(id);
      if (existing) return { slot: existing, created: false };
      const { session, created } = sessions.open(key);
      const slot = new SessionSlot(session);
      slots.set(id, slot);
      if (created) bus.emit({ type: 'session-open', sessionId: id, initiatorId: key.initiatorId, responderId: key.responderId, name: key.name });
      return { slot, created };
    },
  };
}
