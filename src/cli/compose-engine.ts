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

const PREVIOUS_ATTEMPT_MS = 5000;

/**
 * How a worker runs one turn (docs/engine.md#a-turn-on-a-worker): reset the session's projection
 * to the turn's start, build the run's core from the shared workspace with the durable steps,
 * send the message, wait for the session to be idle and return the outcome. Each turn builds its
 * core afresh, so a worker always sees the workspace as it is (participants, rules, config).
 * A request that reaches the user waits on an awakeable (docs/engine.md#approvals).
 * Its events go to `feed` (the hubs following this worker), not to the run's ledger: the hub
 * records what it receives.
 */
export function createWorkerTurns(context: CommandContext, feed: EventFeed): RunTurnOnWorker {
  // An attempt cut off from the engine may still be ending here when its replay arrives (it was
  // cancelled when the engine lost it): the replay waits for it, so two attempts do not write the
  // same session's projection at once — at most PREVIOUS_ATTEMPT_MS: a step waiting on a lost
  // engine may never settle, and then writes nothing more.
  const ending = new Map<string, Promise<unknown>>();
  return async (input, sessionId, journal): Promise<TurnOutcome> => {
    const before = ending.get(sessionId);
    const mine = (async () => {
      if (before) await Promise.race([before.catch(() => undefined), new Promise((r) => setTimeout(r, PREVIOUS_ATTEMPT_MS).unref())]);
      return runOne(input, sessionId, journal);
    })();
    ending.set(sessionId, mine);
    try {
      return await mine;
    } finally {
      if (ending.get(sessionId) === mine) ending.delete(sessionId);
    }
  };

  async function runOne(input: Parameters<RunTurnOnWorker>[0], sessionId: string, journal: Parameters<RunTurnOnWorker>[2]): Promise<TurnOutcome> {
    let expected: string;
    try {
      expected = sessionIdOf({ initiatorId: USER_ID, responderId: input.responderId, name: input.name });
    } catch (error) {
      throw new TurnRefused(messageOf(error));
    }
    if (expected !== sessionId) throw new TurnRefused(`the turn for ${expected} was sent to the session ${sessionId}`);
    const root = await realpath(context.workspaceRoot);
    await resetProjection(layoutFor(root).sessionFile(input.runId, sessionId), journal);
    let app: Awaited<ReturnType<typeof composeApp>> | undefined;
    // A request for the user waits on an awakeable: any hub resolves it, whichever worker runs the turn then.
    const awaited = new Set<string>();
    const awaitDecision = (requestId: string): void => {
      if (awaited.has(requestId)) return;
      awaited.add(requestId);
      const decision = journal.awakeable<{ decision: 'approved' | 'rejected'; reason?: string; allowForSession?: boolean; by?: string }>();
      feed.publishAwakeable(input.runId, requestId, decision.id);
      void decision.promise.then((d) => {
        app?.core.resolveApprovals([requestId], d.decision === 'approved' ? 'approved' : 'rejected', {
          ...(d.reason ? { reason: d.reason } : {}), ...(d.allowForSession ? { allowForSession: true } : {}), ...(d.by?.startsWith('remote:') ? { by: d.by as `remote:${string}` } : {}),
        });
      }, () => undefined);
    };
    try {
      app = await composeApp(context, {
        runId: input.runId,
        onBus: (bus) => {
          bus.subscribeAll((event) => feed.publish(event));
          bus.subscribe('approval-request', (event) => {
            if (event.approverId === USER_ID && event.sessionId !== undefined) awaitDecision(event.requestId);
          });
        },
        worker: { wrapTurn: (deps) => journaledTurn(deps, journal), wrapExecute: (execute) => journaledExecute(execute, journal) },
      });
    } catch (error) {
      // A workspace the worker cannot use (bad config, unknown run) will not improve by retrying.
      if (error instanceof LegionError) throw new TurnRefused(error.message);
      throw error;
    }
    const core = app.core;
    // The engine lost this attempt (it will replay the turn), or a front end cancelled the turn: stop working for it.
    const stop = (): void => core.cancel(sessionId);
    journal.attemptEnded.addEventListener('abort', stop, { once: true });
    journal.cancelled.addEventListener('abort', stop, { once: true });
    feed.publishInvocation(input.runId, sessionId, journal.invocationId);
    try {
      const sent = core.send(input.responderId, input.text, input.name);
      if (!sent.ok) throw new TurnRefused(sent.error);
      await core.idle(sessionId);
      return core.lastOutcome(sessionId) ?? { kind: 'failed', error: 'the turn ended without an outcome' };
    } finally {
      journal.attemptEnded.removeEventListener('abort', stop);
      journal.cancelled.removeEventListener('abort', stop);
      await app.close('turn ended');
    }
  }
}
