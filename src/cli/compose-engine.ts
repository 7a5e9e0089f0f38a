import { realpath } from 'node:fs/promises';
import { join } from 'node:path';
import type { CommandContext } from './command';
import { composeApp } from './compose';
import { LegionError, messageOf } from '../errors';
import { layoutFor } from '../storage/layout';
import { sessionIdOf } from '../session/ids';
import { USER_ID } from '../collective/participant';
import type { TurnOutcome } from '../runtime/turn';
import type { DurableJournal } from '../engine/durable-steps';
import { turnSteps, type TurnSteps } from '../engine/turn-steps';
import { workspaceFingerprint, sameExcept, changedFiles } from './worker-fingerprint';
import type { AppSession } from './compose';
import { resetProjection } from '../engine/projection';
import { TurnRefused, type RunTurnOnWorker } from '../engine/session-object';
import type { EventFeed } from '../engine/event-feed';
import { workerUsage, type WorkerUsage } from './worker-usage';

const PREVIOUS_ATTEMPT_MS = 5000;

/** A run's core a worker keeps between turns, with what it was built from (or last saw). */
interface KeptCore {
  readonly app: AppSession;
  readonly steps: TurnSteps;
  readonly usage: WorkerUsage;
  fingerprint: string;
}

/**
 * How a worker runs one turn (docs/engine.md#a-turn-on-a-worker): reset the session's projection
 * to the turn's start, take the run's core this worker kept from its last turn if nothing it was
 * built from changed since (workspaceFingerprint: the run's session files, approvals, config,
 * rules, participants, agent files; the hub's usage totals are read afresh each turn,
 * worker-usage.ts), else build it afresh from the shared workspace with
 * the durable steps; send the message, wait for the session to be idle and return the outcome.
 * The core is kept after a turn that ran to its end and changed no file but its own session's;
 * any other turn closes it. A request that reaches the user waits on an awakeable
 * (docs/engine.md#approvals). Its events go to `feed` (the hubs following this worker), not to
 * the run's ledger: the hub records what it receives. LEGION_ENGINE_TIMING=1: each turn's phases
 * go to stderr.
 */
export function createWorkerTurns(context: CommandContext, feed: EventFeed): { runTurn: RunTurnOnWorker; closeKept(): Promise<void> } {
  // An attempt cut off from the engine may still be ending here when its replay arrives (it was
  // cancelled when the engine lost it): the replay waits for it, so two attempts do not write the
  // same session's projection at once — at most PREVIOUS_ATTEMPT_MS: a step waiting on a lost
  // engine may never settle, and then writes nothing more.
  const ending = new Map<string, Promise<unknown>>();
  // The last core of each run, idle between turns; a turn takes it (a concurrent one builds its own).
  const kept = new Map<string, KeptCore>();
  // The worker stops: its kept cores close as a turn's core does (run.json's time, the sandbox, checkpoints).
  const closeKept = async (): Promise<void> => {
    const cores = [...kept.values()];
    kept.clear();
    await Promise.all(cores.map((core) => core.app.close('worker stopped').catch(() => undefined)));
  };
  const runTurn: RunTurnOnWorker = async (input, sessionId, journal): Promise<TurnOutcome> => {
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
  return { runTurn, closeKept };

  async function runOne(input: Parameters<RunTurnOnWorker>[0], sessionId: string, journal: DurableJournal): Promise<TurnOutcome> {
    const timing = context.io.env.LEGION_ENGINE_TIMING === '1';
    const t0 = performance.now();
    let expected: string;
    try {
      expected = sessionIdOf({ initiatorId: input.initiatorId ?? USER_ID, responderId: input.responderId, name: input.name });
    } catch (error) {
      throw new TurnRefused(messageOf(error));
    }
    if (expected !== sessionId) throw new TurnRefused(`the turn for ${expected} was sent to the session ${sessionId}`);
    const root = await realpath(context.workspaceRoot);
    const layout = layoutFor(root);
    resetProjection(layout.sessionFile(input.runId, sessionId), join(layout.runDir(input.runId), 'projection', `${sessionId}.base.json`), journal.invocationId);
    const t1 = performance.now();
    // A core kept from an earlier turn serves only if nothing it was built from changed since
    // (another worker's turn, a replay's reset, a config edit): otherwise it is built afresh.
    const sessionFile = layout.sessionFile(input.runId, sessionId);
    const before = workspaceFingerprint(root, input.runId, context.io.env);
    let worker = kept.get(input.runId);
    kept.delete(input.runId);
    const reused = worker !== undefined && worker.fingerprint === before;
    if (worker && !reused) {
      await worker.app.close('workspace changed');
      worker = undefined;
    }
    if (!worker) worker = await buildCore(input.runId);
    const t2 = performance.now();
    const { app, steps } = worker;
    await worker.usage.reseed(layout.usage(input.runId));
    steps.begin(input.runId, journal);
    const core = app.core;
    // The engine lost this attempt (it will replay the turn), or a front end cancelled the turn: stop working for it.
    const stop = (): void => core.cancel(sessionId);
    journal.attemptEnded.addEventListener('abort', stop, { once: true });
    journal.cancelled.addEventListener('abort', stop, { once: true });
    feed.publishInvocation(input.runId, sessionId, journal.invocationId);
    let keep = false;
    try {
      // A delegation (docs/engine.md#delegation) goes on with its caller's chain; the user's message starts one.
      const sent = input.initiatorId !== undefined && input.chain && input.sessionChain
        ? core.delegated({ sessionId, initiatorId: input.initiatorId, responderId: input.responderId, name: input.name, text: input.text, chain: input.chain, sessionChain: input.sessionChain })
        : core.send(input.responderId, input.text, input.name);
      if (!sent.ok) throw new TurnRefused(sent.error);
      await core.idle(sessionId);
      const outcome = core.lastOutcome(sessionId) ?? { kind: 'failed', error: 'the turn ended without an outcome' };
      // Kept only after a turn that ran to its end undisturbed, with nothing else running in the core.
      keep = !journal.attemptEnded.aborted && !journal.cancelled.aborted && outcome.kind !== 'interrupted'
        && core.sessions().every((s) => s.status === 'idle' || s.status === 'error');
      return outcome;
    } finally {
      journal.attemptEnded.removeEventListener('abort', stop);
      journal.cancelled.removeEventListener('abort', stop);
      steps.end();
      const t3 = performance.now();
      // Kept when the turn changed nothing but its own session file (which its core holds):
      // a file another turn or process wrote meanwhile may differ from the core's memory.
      const after = keep && !kept.has(input.runId) ? workspaceFingerprint(root, input.runId, context.io.env) : undefined;
      if (after !== undefined && sameExcept(before, after, sessionFile)) {
        worker.fingerprint = after;
        kept.set(input.runId, worker);
      } else {
        await app.close('turn ended');
        if (timing && after !== undefined) context.io.stderr(`legion worker: not kept, changed: ${changedFiles(before, after, sessionFile).join(', ')}\n`);
      }
      if (timing) context.io.stderr(`legion worker: turn ${sessionId}: reset ${(t1 - t0).toFixed(1)} ms, core ${reused ? 'kept' : 'built'} ${(t2 - t1).toFixed(1)} ms, turn ${(t3 - t2).toFixed(1)} ms, end ${(performance.now() - t3).toFixed(1)} ms\n`);
    }
  }

  /** The run's core with its steps journaled in whichever turn it serves (`steps.begin`). */
  async function buildCore(runId: string): Promise<KeptCore> {
    const steps = turnSteps(feed);
    const usage = workerUsage();
    let app: AppSession;
    try {
      app = await composeApp(context, {
        runId,
        onBus: (bus) => {
          bus.subscribeAll((event) => feed.publish(event));
          bus.subscribe('usage', (event) => usage.add(event));
          bus.subscribe('approval-request', (event) => {
            if (event.approverId === USER_ID && event.sessionId !== undefined) steps.awaitDecision(event.requestId);
          });
        },
        worker: { wrapTurn: steps.wrapTurn, wrapExecute: steps.wrapExecute, delegate: steps.delegate, runTotals: usage.totals },
      });
    } catch (error) {
      // A workspace the worker cannot use (bad config, unknown run) will not improve by retrying.
      if (error instanceof LegionError) throw new TurnRefused(error.message);
      throw error;
    }
    steps.resolve = (ids, decision) => app.core.resolveApprovals(ids, decision.decision === 'approved' ? 'approved' : 'rejected', {
      ...(decision.reason ? { reason: decision.reason } : {}), ...(decision.allowForSession ? { allowForSession: true } : {}),
      ...(decision.by?.startsWith('remote:') ? { by: decision.by as `remote:${string}` } : {}),
    });
    return { app, steps, usage, fingerprint: '' };
  }
}
