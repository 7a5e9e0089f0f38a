import { setMaxListeners } from 'node:events';
import type { Participant } from '../collective/participant';
import { messageOf } from '../errors';
import type { Journal } from './journal';
import type { RunState } from './run-state';
import type { SessionSlot, Turn, TurnOutcome, TurnRequest, TurnStart } from './turn';

/** One turn at a time per session. */
export interface Scheduler {
  /**
   * Queue a request (FIFO); it starts at once when the session is free. A queued request whose
   * caller is cancelled leaves the queue as `interrupted`. Returns true when it had to wait.
   */
  enqueue(slot: SessionSlot, request: TurnRequest): boolean;
  /** Interrupt a session: its running turn (and what that turn waits on) and its queue. */
  cancel(slot: SessionSlot): void;
}

/** What runs the turns a scheduler starts. */
export interface TurnRunning {
  /** Run one turn (agent-loop.ts `runTurn` with the core's deps). */
  runTurn(turn: Turn, start: TurnStart): Promise<TurnOutcome>;
  /** What the finished turn's agent left undecided climbs on (approval-route.ts). */
  climbUnanswered(turn: Turn): void;
}

export interface SchedulerDeps<T extends TurnRunning> {
  readonly state: Pick<RunState, 'nextTurnId' | 'turnStarted' | 'turnEnded'>;
  participant(id: string): Participant | undefined;
  readonly notice: Journal['notice'];
  /**
   * Builds what runs turns, given the scheduler's `enqueue`: a turn's own steps start turns
   * (delegation, approver turns) through it. Called once, inside `createScheduler`; it must not
   * enqueue while building. The one cycle of the core (turns start turns), closed here.
   */
  turns(enqueue: Scheduler['enqueue']): T;
}

/** The scheduler and what `deps.turns` built with its `enqueue`. */
export function createScheduler<T extends TurnRunning>(deps: SchedulerDeps<T>): { scheduler: Scheduler; turns: T } {
  const { state } = deps;

  const enqueue = (slot: SessionSlot, request: TurnRequest): boolean => {
    const queued = slot.busy;
    if (request.signal?.aborted) {
      request.settle({ kind: 'interrupted' });
      return queued;
    }
    slot.queue.push(request);
    if (request.signal) {
      const signal = request.signal;
      const onAbort = (): void => {
        slot.queueListeners.delete(request);
        const at = slot.queue.indexOf(request);
        if (at === -1) return;
        slot.queue.splice(at, 1);
        request.settle({ kind: 'interrupted' });
        slot.settleIdle();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      slot.queueListeners.set(request, () => signal.removeEventListener('abort', onAbort));
    }
    if (!slot.running) startNext(slot);
    return queued;
  };

  /** Start the next queued request of `slot`, if it is free. */
  const startNext = (slot: SessionSlot): void => {
    if (slot.running) return;
    const request = slot.queue.shift();
    if (!request) {
      slot.settleIdle();
      return;
    }
    slot.queueListeners.get(request)?.();
    slot.queueListeners.delete(request);
    const key = slot.handle.key;
    const responder = deps.participant(key.responderId);
    if (!responder || responder.kind !== 'agent' || responder.status !== 'active') {
      request.settle({ kind: 'failed', error: `${key.responderId} is ${responder ? 'retired' : 'unknown'} and takes no messages` });
      startNext(slot);
      return;
    }
    const controller = new AbortController();
    // A turn's signal legitimately has many listeners (parallel tools, delegations, waits).
    setMaxListeners(500, controller.signal);
    const turn: Turn = {
      id: state.nextTurnId(),
      slot,
      session: slot.handle,
      agent: responder,
      chain: request.chain,
      sessionChain: request.sessionChain,
      controller,
      parent: request.parent,
      delegations: new Set(),
      delivered: new Set(),
      wakers: new Set(),
      finished: false,
    };
    const onCallerAbort = (): void => controller.abort();
    request.signal?.addEventListener('abort', onCallerAbort, { once: true });
    if (request.signal?.aborted) controller.abort();
    slot.running = turn;
    state.turnStarted(turn);
    void turns.runTurn(turn, request.start)
      .catch((error: unknown) => {
        // runTurn handles its own failures; reaching here is a bug. Keep the session usable.
        deps.notice('error', `internal error in ${key.responderId}'s turn: ${messageOf(error)}`, slot.handle.id);
        return { kind: 'failed' as const, error: `internal error: ${messageOf(error)}` };
      })
      .then((outcome) => {
        turn.finished = true;
        request.signal?.removeEventListener('abort', onCallerAbort);
        state.turnEnded(turn);
        // Nothing keeps running on behalf of a finished turn.
        if (turn.delegations.size > 0) {
          for (const delegation of turn.delegations) delegation.settle({ kind: 'interrupted' });
          controller.abort('turn ended');
        }
        turns.climbUnanswered(turn);
        slot.running = undefined;
        request.settle(outcome);
        startNext(slot);
      });
  };

  const turns = deps.turns(enqueue);
  const scheduler: Scheduler = {
    enqueue,
    cancel(slot) {
      for (const request of slot.queue.splice(0)) {
        slot.queueListeners.get(request)?.();
        slot.queueListeners.delete(request);
        request.settle({ kind: 'interrupted' });
      }
      slot.running?.controller.abort();
      for (const question of [...slot.questions]) question.cancel();
      slot.settleIdle();
    },
  };
  return { scheduler, turns };
}
