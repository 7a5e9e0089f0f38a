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
import { workspaceFingerprint, changedFiles, restamped, type Fingerprint } from './worker-fingerprint';
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
  fingerprint: Fingerprint;
  /** The sessions whose turns run in it now (each in its own invocation). */
  readonly active: Set<string>;
  /** No new turn joins it (something it was built from changed, or a turn did not end cleanly): closed once idle. */
  retired: boolean;
}

/**
 * How a worker runs one turn (docs/engine.md#a-turn-on-a-worker): reset the session's projection
 * to the turn's start, join the run's core this worker keeps if nothing it was built from changed
 * since (workspaceFingerprint: the run's session files, approvals, config, rules, participants,
 * agent files; the session files of the turns running in it now left out, as it writes them
 * itself; the hub's usage totals are read afresh each turn, worker-usage.ts), else build it afresh
 * from the shared workspace with the durable steps; send the message, wait for the session to be
 * idle and return the outcome. Turns of several sessions of a run share the core at once, each
 * journaled in its own invocation (turn-steps.ts); concurrent turns arriving while it is built
 * wait for it. The core stays after a turn that ran to its end undisturbed, its own session file
 * restamped in the fingerprint (a file written elsewhere meanwhile is seen by the next turn's
 * scan); otherwise, or when that scan sees a change, it is retired: no turn joins it, and it
 * closes when its last turn ends. A request that reaches the user waits on an awakeable
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
  // The workspace's real path, resolved once (not a trip through the thread pool every turn).
  let workspace: Promise<string> | undefined;
  // The core new turns of each run join (still being built: its promise; undefined if that failed).
  const current = new Map<string, Promise<KeptCore | undefined>>();
  // Every open core, current or retired and still running turns.
  const open = new Set<KeptCore>();
  const close = async (core: KeptCore, why: string): Promise<void> => {
    open.delete(core);
    await core.app.close(why);
  };
  // The worker stops: its cores close as a turn's core does (run.json's time, the sandbox, checkpoints).
  const closeKept = async (): Promise<void> => {
    const cores = [...open];
    current.clear();
    await Promise.all(cores.map((core) => close(core, 'worker stopped').catch(() => undefined)));
  };
  /** The core `sessionId`'s turn runs in: the run's current one if nothing changed under it, else a new one. */
  const coreFor = async (runId: string, sessionId: string, root: string): Promise<{ worker: KeptCore; reused: boolean }> => {
    const layout = layoutFor(root);
    for (;;) {
      const pending = current.get(runId);
      const candidate = pending ? await pending : undefined;
      // Another turn replaced the run's core while this one waited: look at that one.
      if (pending && current.get(runId) !== pending) continue;
      const now = workspaceFingerprint(root, runId, context.io.env);
      const changed = candidate ? changedFiles(candidate.fingerprint, now, new Set([...candidate.active].map((s) => layout.sessionFile(runId, s)))) : [];
      if (candidate && !candidate.retired && !candidate.active.has(sessionId) && changed.length === 0) {
        candidate.active.add(sessionId);
        return { worker: candidate, reused: true };
      }
      if (changed.length > 0 && context.io.env.LEGION_ENGINE_TIMING === '1') context.io.stderr(`legion worker: core not kept, changed: ${changed.join(', ')}\n`);
      // Set before anything is awaited: turns arriving meanwhile wait for this core instead of building their own.
      const building = (async () => {
        if (candidate) await retire(candidate, 'workspace changed');
        const core = await buildCore(runId, now);
        core.active.add(sessionId);
        open.add(core);
        return core;
      })();
      current.set(runId, building.catch(() => undefined));
      return { worker: await building, reused: false };
    }
  };
  const retire = async (core: KeptCore, why: string): Promise<void> => {
    core.retired = true;
    if (core.active.size === 0 && open.has(core)) await close(core, why);
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
    const root = await (workspace ??= realpath(context.workspaceRoot).catch((error: unknown) => {
      workspace = undefined;
      throw error;
    }));
    const layout = layoutFor(root);
    resetProjection(layout.sessionFile(input.runId, sessionId), join(layout.runDir(input.runId), 'projection', `${sessionId}.base.json`), journal.invocationId);
    const t1 = performance.now();
    // A core kept from an earlier turn serves only if nothing it was built from changed since
    // (another worker's turn, a replay's reset, a config edit): otherwise it is built afresh.
    const { worker, reused } = await coreFor(input.runId, sessionId, root);
    const t2 = performance.now();
    const { app, steps } = worker;
    await worker.usage.reseed(layout.usage(input.runId));
    const t2b = performance.now();
    steps.begin(input.runId, sessionId, journal, input.upstream);
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
      // Kept only after a turn that ran to its end undisturbed, nothing running in the core but its turns.
      keep = !journal.attemptEnded.aborted && !journal.cancelled.aborted && outcome.kind !== 'interrupted'
        && core.sessions().every((s) => worker.active.has(s.id) || s.status === 'idle' || s.status === 'error');
      return outcome;
    } finally {
      journal.attemptEnded.removeEventListener('abort', stop);
      journal.cancelled.removeEventListener('abort', stop);
      steps.end(sessionId);
      const t3 = performance.now();
      // Kept after a clean turn, its own session file (which the core holds) restamped in the
      // fingerprint: any other file written meanwhile, by this core or another process, keeps its
      // old line, so the next turn's scan sees it changed and builds the core afresh.
      const kept = keep && !worker.retired;
      if (kept) worker.fingerprint = restamped(worker.fingerprint, layout.sessionFile(input.runId, sessionId));
      worker.active.delete(sessionId);
      if (!kept) await retire(worker, 'turn ended');
      if (timing) context.io.stderr(`legion worker: turn ${sessionId}: reset ${(t1 - t0).toFixed(1)} ms, core ${reused ? 'kept' : 'built'} ${(t2 - t1).toFixed(1)} ms, reseed ${(t2b - t2).toFixed(1)} ms, turn ${(t3 - t2).toFixed(1)} ms, end ${(performance.now() - t3).toFixed(1)} ms\n`);
    }
  }

  /** The run's core with its steps journaled in whichever turn it serves (`steps.begin`). */
  async function buildCore(runId: string, fingerprint: Fingerprint): Promise<KeptCore> {
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
            if (event.approverId === USER_ID && event.sessionId !== undefined) steps.awaitDecision(event.requestId, event.sessionId);
          });
        },
        worker: { wrapTurn: steps.wrapTurn, wrapExecute: steps.wrapExecute, delegate: steps.delegate, step: steps.step, across: steps.across, runTotals: usage.totals },
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
    return { app, steps, usage, fingerprint, active: new Set(), retired: false };
  }
}
