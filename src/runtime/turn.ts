import type { Agent } from '../collective/participant';
import type { ApprovalRequest } from '../authz/approvals';
import type { AgentStatus } from '../events/types';
import type { SessionHandle } from '../session/types';
import type { ResumePoint } from './call-state';
import type { ResumeStage } from './resume-plan';

/**
 * The session state at the bottom of the runtime: what a turn is, how it starts and ends,
 * the slot of a session (its queue and running turn) and the delegations between turns.
 * Nothing here imports another runtime module except for types.
 */

/** How a turn (or a question to the user) ended, as its caller sees it. */
/** `merge`: what became of an isolated session's work (docs/worktrees.md): merged, rejected with the reason, or conflict. */
export type TurnOutcome =
  | { kind: 'done'; text: string; incomplete?: string; merge?: string }
  | { kind: 'failed'; error: string; merge?: string }
  | { kind: 'interrupted' };

export const INTERRUPTED_BY_USER = 'interrupted by the user';

/** Where a turn starts: a new message of its initiator, or the open batch a restart left (restart.ts). */
export type TurnStart =
  | { readonly kind: 'message'; readonly text: string }
  | { readonly kind: 'resume'; readonly point: ResumePoint };

/** A message waiting for its turn in a session (one turn at a time per session). */
export interface TurnRequest {
  readonly start: TurnStart;
  /** Call chain for the responder, outermost first, ending with the responder. */
  readonly chain: readonly string[];
  /** Session ids along the call chain, ending with this session (re-entry check). */
  readonly sessionChain: readonly string[];
  /** The communicator call waiting on this turn (absent for the user's own messages). */
  readonly parent?: Delegation;
  /** Aborts the request (queued or running) when the caller is cancelled. */
  readonly signal?: AbortSignal;
  settle(outcome: TurnOutcome): void;
}

/** A question of an agent to the user, waiting in the user's lane `session-<agent>__user__<name>` (user-questions.ts). */
export interface Question {
  readonly text: string;
  readonly askedBy: string;
  /** True once the question is the lane's open one (its message appended). */
  presented: boolean;
  answer(text: string): void;
  cancel(): void;
}

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

  /** Wake `idle()` waiters when nothing is left to do. */
  settleIdle(): void {
    if (this.busy) return;
    for (const wake of this.idleWaiters.splice(0)) wake();
  }
}

/**
 * One running turn of an agent in a session. `delegations` are the communicator calls it
 * made whose target turn has not been collected yet; `delivered` the approval requests
 * routed to this agent to decide (shown to it or still in an inbox).
 */
export interface Turn {
  readonly id: number;
  readonly slot: SessionSlot;
  readonly session: SessionHandle;
  readonly agent: Agent;
  readonly chain: readonly string[];
  readonly sessionChain: readonly string[];
  readonly controller: AbortController;
  readonly parent?: Delegation;
  readonly delegations: Set<Delegation>;
  readonly delivered: Set<string>;
  /** Called whenever a delegation of this turn has news (an outcome or requests for this agent). */
  readonly wakers: Set<() => void>;
  /** The phase of the current tool batch: waiting on its approvals, or running its calls. */
  stage?: ResumeStage;
  finished: boolean;
}

/**
 * A communicator call of `owner` to `sessionId`. It waits for the target's turn; when
 * approval requests for `owner` arrive from below, the call returns early ("detached")
 * and the outcome is collected after the owner's next tool batch or at its turn's end.
 */
export class Delegation {
  outcome: TurnOutcome | undefined;
  detached = false;
  /** Requests for the owner raised below this delegation, not yet shown to it. */
  readonly inbox: ApprovalRequest[] = [];
  /**
   * Engine mode, a delegation running elsewhere whose news (its outcome, requests for the owner)
   * is looked for only while the owner waits for news (docs/engine.md#approvals-across-objects):
   * starts looking once (a second call while it looks does nothing); news arrives through
   * `settle` and `deliver`.
   */
  poll?: () => void;

  constructor(
    readonly owner: Turn,
    readonly sessionId: string,
    readonly targetId: string,
  ) {}

  settle(outcome: TurnOutcome): void {
    if (this.outcome) return;
    this.outcome = outcome;
    this.wakeOwner();
  }

  deliver(request: ApprovalRequest): void {
    this.inbox.push(request);
    this.owner.delivered.add(request.requestId);
    this.wakeOwner();
  }

  private wakeOwner(): void {
    for (const wake of [...this.owner.wakers]) wake();
  }
}

/** Resolves when any delegation of `turn` has news, or `signal` aborts. */
export function nextNews(turn: Turn, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    for (const d of turn.delegations) d.poll?.();
    const done = (): void => {
      turn.wakers.delete(done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    turn.wakers.add(done);
    signal.addEventListener('abort', done, { once: true });
  });
}
