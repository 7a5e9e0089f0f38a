import type { EventInput } from '../events/types';
import type { TurnDeps } from '../runtime/agent-loop';
import type { SessionSlot, Turn, TurnOutcome, TurnStart } from '../runtime/turn';
import type { SessionHandle } from '../session/types';
import type { ProjectionFollower } from './projection-follower';
import type { EngineHub } from './hub';

/** The hub's turns in engine mode (docs/engine.md#streaming-and-the-hub). */
export interface EngineTurns {
  /** The core's `turnRunner`. */
  run(turn: Turn, start: TurnStart, deps: TurnDeps): Promise<TurnOutcome>;
  /**
   * A worker's event, before the hub's bus: an `agent-status` of a session this hub has sent a
   * turn for goes through the journal's `setStatus` on the session's slot, as the hub's own
   * statuses do (emitted on a change only), and is taken (true). Any other event is the
   * caller's to emit (false).
   */
  fromFeed(event: EventInput): boolean;
}

/**
 * A turn of the hub in engine mode: sent to the engine, which runs it on a worker; the session's
 * messages come from the projection the worker wrote (`projection`, which reads only what was
 * appended since the last turn) into the hub's memory once it ended. A turn resumed at start (a
 * batch left open in-process) is not sent: it failed with the reason.
 *
 * Two sources say the status of a turn's agent: the hub (`thinking` when it sends the turn,
 * `idle` or `error` when it ends) and the worker running it (every change, its own `thinking` at
 * the start and `idle` at the end among them). Both go through the journal's `setStatus` on the
 * session's slot, which emits a status only when the slot does not show it already: front ends
 * and the ledger get each change once, as in-process, and the slot (the hub's `sessions()`)
 * shows what the worker does.
 */
export function engineTurns(hub: Pick<EngineHub, 'runTurn'>, runId: string, projection: ProjectionFollower): EngineTurns {
  // The sessions this hub has sent turns for: their slot and the journal's `setStatus`.
  const sent = new Map<string, { slot: SessionSlot; setStatus: TurnDeps['setStatus'] }>();
  return {
    async run(turn, start, deps) {
      sent.set(turn.session.id, { slot: turn.slot, setStatus: deps.setStatus });
      if (start.kind !== 'message') {
        const error = 'a turn left open by an in-process run cannot resume on the engine: send the agent a new message';
        deps.setStatus(turn.slot, 'idle');
        return { kind: 'failed', error };
      }
      deps.setStatus(turn.slot, 'thinking');
      const outcome = await hub.runTurn({ runId, responderId: turn.agent.id, name: turn.session.key.name, text: start.text }, turn.session.id, turn.controller.signal);
      catchUp(turn.session, projection);
      if (outcome.kind === 'failed') {
        deps.setStatus(turn.slot, 'error', outcome.error);
        deps.notice('error', `${turn.agent.id}: ${outcome.error}`, turn.session.id);
      } else {
        deps.setStatus(turn.slot, 'idle');
      }
      return outcome;
    },
    fromFeed(event) {
      if (event.type !== 'agent-status') return false;
      const session = sent.get(event.sessionId);
      if (!session || session.slot.handle.key.responderId !== event.participantId) return false;
      session.setStatus(session.slot, event.status, event.detail);
      return true;
    },
  };
}

/** Append (in memory) what the projection holds beyond what the hub's session has. */
export function catchUp(session: SessionHandle, projection: ProjectionFollower): void {
  for (const message of projection.since(session.id, session.messages().length) ?? []) session.append(message);
}
