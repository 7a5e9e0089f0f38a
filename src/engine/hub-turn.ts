import type { TurnDeps } from '../runtime/agent-loop';
import type { Turn, TurnOutcome, TurnStart } from '../runtime/turn';
import type { SessionHandle } from '../session/types';
import type { ProjectionFollower } from './projection-follower';
import type { EngineHub } from './hub';
import type { ShownStatus } from './shown-status';

/**
 * A turn of the hub in engine mode (docs/engine.md#streaming-and-the-hub): sent to the engine,
 * which runs it on a worker; the session's messages come from the projection the worker wrote
 * (`projection`, which reads only what was appended since the last turn) into the hub's memory
 * once it ended. A turn resumed at start (a batch left
 * open in-process) is not sent: it failed with the reason. The agent's `idle` at the end is
 * emitted only if the worker's feed did not show it already (`shown`, shown-status.ts): the
 * session's slot takes it either way.
 */
export function engineTurnRunner(hub: EngineHub, runId: string, projection: ProjectionFollower, shown: ShownStatus) {
  return async (turn: Turn, start: TurnStart, deps: TurnDeps): Promise<TurnOutcome> => {
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
    } else if (shown.shows(turn.session.id, turn.agent.id, 'idle')) {
      // Front ends have it from the worker: the slot follows without a second event.
      turn.slot.status = 'idle';
      turn.slot.statusDetail = undefined;
    } else {
      deps.setStatus(turn.slot, 'idle');
    }
    return outcome;
  };
}

/** Append (in memory) what the projection holds beyond what the hub's session has. */
export function catchUp(session: SessionHandle, projection: ProjectionFollower): void {
  for (const message of projection.since(session.id, session.messages().length) ?? []) session.append(message);
}
