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

export interface SchedulerDeps {
  readonly state: Pick<RunState, 'nextTurnId' | 'turnStarted' | 'turnEnded'>;
  participant(id: string): Participant | undefined;
  readonly notice: Journal['notice'];
  /** Run one turn (agent-loop.ts `runTurn` with the core's deps). */
  runTurn(turn: Turn, start: TurnStart): Promise<TurnOutcome>;
  /** What the finished turn's agent left undecided climbs on (approval-route.ts). */
  climbUnanswered(turn: Turn): void;
}

export function createScheduler(deps: SchedulerDeps): Scheduler {
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
    void deps.runTurn(turn, request.start)
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
        deps.climbUnanswered(turn);
        slot.running = undefined;
        request.settle(outcome);
        startNext(slot);
      });
  };

  return {
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
}
