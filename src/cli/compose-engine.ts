import { realpath } from 'node:fs/promises';
import type { CommandContext } from './command';
import { composeApp } from './compose';
import { LegionError, messageOf } from '../errors';
import { layoutFor } from '../storage/layout';
import { sessionIdOf } from '../session/ids';
import { USER_ID } from '../collective/participant';
import type { TurnOutcome } from '../runtime/turn';
import { journaledExecute, journaledTurn } from '../engine/durable-steps';
import { resetProjection } from '../engine/projection';
import { TurnRefused, type RunTurnOnWorker } from '../engine/session-object';
import type { EventFeed } from '../engine/event-feed';

/**
 * How a worker runs one turn (docs/engine.md#a-turn-on-a-worker): reset the session's projection
 * to the turn's start, build the run's core from the shared workspace with the durable steps,
 * send the message, wait for the session to be idle and return the outcome. Each turn builds its
 * core afresh, so a worker always sees the workspace as it is (participants, rules, config).
 * Approvals that would reach the user are denied until they are awakeables (docs/engine.md#status).
 * Its events go to `feed` (the hubs following this worker), not to the run's ledger: the hub
 * records what it receives.
 */
export function createWorkerTurns(context: CommandContext, feed: EventFeed): RunTurnOnWorker {
  return async (input, sessionId, journal): Promise<TurnOutcome> => {
    let expected: string;
    try {
      expected = sessionIdOf({ initiatorId: USER_ID, responderId: input.responderId, name: input.name });
    } catch (error) {
      throw new TurnRefused(messageOf(error));
    }
    if (expected !== sessionId) throw new TurnRefused(`the turn for ${expected} was sent to the session ${sessionId}`);
    const root = await realpath(context.workspaceRoot);
    await resetProjection(layoutFor(root).sessionFile(input.runId, sessionId), journal);
    let app;
    try {
      app = await composeApp(context, {
        runId: input.runId,
        headless: { approve: 'deny' },
        onBus: (bus) => bus.subscribeAll((event) => feed.publish(event)),
        worker: { wrapTurn: (deps) => journaledTurn(deps, journal), wrapExecute: (execute) => journaledExecute(execute, journal) },
      });
    } catch (error) {
      // A workspace the worker cannot use (bad config, unknown run) will not improve by retrying.
      if (error instanceof LegionError) throw new TurnRefused(error.message);
      throw error;
    }
    try {
      const sent = app.core.send(input.responderId, input.text, input.name);
      if (!sent.ok) throw new TurnRefused(sent.error);
      await app.core.idle(sessionId);
      return app.core.lastOutcome(sessionId) ?? { kind: 'failed', error: 'the turn ended without an outcome' };
    } finally {
      await app.close('turn ended');
    }
  };
}
