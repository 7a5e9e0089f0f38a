import { setMaxListeners } from 'node:events';
import { USER_ID } from '../collective/participant';
import { messageOf } from '../errors';
import type { Hub, SessionSlot } from './hub';
import { runTurn } from './agent-loop';
import type { Turn, TurnRequest } from './turn';
import { climbUnanswered } from './approval-route';

/**
 * One turn at a time per session: a request to a busy session waits in its queue
 * (FIFO). A queued request whose caller is cancelled leaves the queue as `interrupted`.
 * Returns true when the request had to wait.
 */
export function enqueue(hub: Hub, slot: SessionSlot, request: TurnRequest): boolean {
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
      hub.settleIdle(slot);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    slot.queueListeners.set(request, () => signal.removeEventListener('abort', onAbort));
  }
  if (!slot.running) pump(hub, slot);
  return queued;
}

/** Start the next queued request of `slot`, if it is free. */
function pump(hub: Hub, slot: SessionSlot): void {
  if (slot.running) return;
  const request = slot.queue.shift();
  if (!request) {
    hub.settleIdle(slot);
    return;
  }
  slot.queueListeners.get(request)?.();
  slot.queueListeners.delete(request);
  const key = slot.handle.key;
  const responder = hub.env.registry.get(key.responderId);
  if (!responder || responder.kind !== 'agent' || responder.status !== 'active') {
    request.settle({ kind: 'failed', error: `${key.responderId} is ${responder ? 'retired' : 'unknown'} and takes no messages` });
    pump(hub, slot);
    return;
  }
  const controller = new AbortController();
  // A turn's signal legitimately has many listeners (parallel tools, delegations, waits).
  setMaxListeners(500, controller.signal);
  const turn: Turn = {
    id: hub.nextTurnId(),
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
  hub.running.add(turn);
  void runTurn(hub, slot, turn, request.text, request.resume)
    .catch((error: unknown) => {
      // runTurn handles its own failures; reaching here is a bug. Keep the session usable.
      hub.notice('error', `internal error in ${key.responderId}'s turn: ${messageOf(error)}`, slot.handle.id);
      return { kind: 'failed' as const, error: `internal error: ${messageOf(error)}` };
    })
    .then((outcome) => {
      turn.finished = true;
      request.signal?.removeEventListener('abort', onCallerAbort);
      hub.turnEnded(turn);
      // Nothing keeps running on behalf of a finished turn.
      if (turn.delegations.size > 0) {
        for (const delegation of turn.delegations) delegation.settle({ kind: 'interrupted' });
        controller.abort('turn ended');
      }
      climbUnanswered(hub, turn);
      slot.running = undefined;
      request.settle(outcome);
      pump(hub, slot);
    });
}

/** Interrupt a session: its running turn (and what that turn waits on) and its queue. */
export function cancelSlot(hub: Hub, slot: SessionSlot): void {
  for (const request of slot.queue.splice(0)) {
    slot.queueListeners.get(request)?.();
    slot.queueListeners.delete(request);
    request.settle({ kind: 'interrupted' });
  }
  slot.running?.controller.abort();
  for (const question of [...slot.questions]) question.cancel();
  hub.settleIdle(slot);
}

export const isUserSession = (slot: SessionSlot): boolean => slot.handle.key.responderId === USER_ID;
