import { attachLedger, type Ledger } from '../events/ledger';
import type { LoadedRun, RunStore } from '../session/types';
import { messageOf } from '../errors';
import { NO_SECRETS, type SecretScrubber } from '../authz/scrub';
import type { AddAllowance, ApprovalsElsewhere, PriceOf } from './ports';
import { RunState, createSlots } from './run-state';
import { createJournal } from './journal';
import { createCommands, type Core } from './commands';
import { answerDropped, planResumes, startResumes, type ResumePlan } from './restart';
import { auditExpired } from './open-calls';
import { createUsageBook, readRunUsage, type RunUsage } from './usage-book';
import { createScheduler } from './scheduler';
import { createTurnParts, type TurnOptions } from './turn-parts';

export interface CoreOptions extends TurnOptions {
  /**
   * The run, loaded (histories repaired) by the run store; the caller holds its lock. Sessions
   * it left open (`leaveOpen: leaveOpenFor(readPendingApprovals(…), …)`) are resumed or answered here.
   */
  readonly run: LoadedRun;
  readonly resumed: boolean;
  /** Saves run.json (title, updatedAt); optional in tests. */
  readonly runStore?: Pick<RunStore, 'save'>;
  readonly priceOf?: PriceOf;
  readonly addAllowance?: AddAllowance;
  /**
   * Approval requests waiting outside this process (engine mode's hub: on the workers); listed and
   * decided with the core's own. Given, the requests in the run's `approvals.jsonl` are theirs (the
   * workers' cores wrote them): this core's queue keeps only their ids (`load({ idsOnly })`; its own
   * requests, a workflow's budget, take others), none as its own, so a restarted hub offers
   * a worker's request only as its worker still holds it (docs/engine.md#approvals), never a stale
   * copy read from disk that a decision would not reach.
   */
  readonly elsewhere?: ApprovalsElsewhere;
  readonly clock?: () => Date;
  /** Record every event to `runs/<runId>/events.jsonl` (default true). */
  readonly ledger?: boolean;
  /** Notices to emit right after `run-start` (config warnings, load issues). */
  readonly startNotices?: readonly { level: 'info' | 'warn' | 'error'; message: string }[];
  /** Last step of `shutdown` (release the run lock). */
  readonly onShutdown?: () => void;
  /** Known secrets to keep out of histories and streamed text (default: none). */
  readonly scrub?: SecretScrubber;
  /**
   * `resume` (default): resume the turns `run.leftOpen` names and expire every other pending approval
   * (this process drives the run). `none`: a worker of the engine building the core for one
   * session's turn (docs/engine.md): other sessions' open calls and pending approvals belong to
   * turns running elsewhere and are left alone.
   */
  readonly restartHandling?: 'resume' | 'none';
  /**
   * Given: this core does not keep the run's totals (`usage.json`) and budgets and `usage()` read
   * these instead. A worker of the engine: the hub counts the usage events it forwards
   * (docs/engine.md#what-is-not-durable), the worker reads the hub's totals at each turn's start.
   */
  readonly runTotals?: () => RunUsage;
}

/**
 * Build the core of one run (the `LegionCore` front ends drive). Emits `run-start`,
 * reports what loading found, resumes the turns a previous process left waiting on approvals
 * (`run.leftOpen`: the user's lanes, and the call chains below them, see restart.ts; their
 * requests are re-offered under the same ids), and expires every other request left pending
 * (its turn died with that process; the history answers the call "interrupted"). Expiries
 * are audited.
 */
export async function createCore(options: CoreOptions): Promise<Core> {
  const { bus, registry, approvals, audit } = options;
  const runId = options.run.run.id;
  const sessions = options.run.sessions;
  const clock = options.clock ?? (() => new Date());
  const scrub = options.scrub ?? NO_SECRETS;

  // 1. The run's records: state, journal (every message and status), slots, usage totals (runs/<runId>/usage.json, across restarts).
  const state = new RunState();
  const journal = createJournal({ bus, scrub, clock, ...(options.priceOf ? { priceOf: options.priceOf } : {}) });
  const { notice } = journal;
  const slots = createSlots(state.slots, sessions, bus);
  const usageFile = options.layout.usage(runId);
  const usageRead = await readRunUsage(usageFile);
  const usage = createUsageBook({ file: usageFile, seed: usageRead.usage, onError: (message) => notice('warn', message) });
  const totals = options.runTotals ?? (() => usage.totals());

  // 2. The scheduler, and what runs turns built from its enqueue (turn-parts.ts): turns start turns.
  const { scheduler, turns } = createScheduler({
    state,
    participant: (id) => registry.get(id),
    notice,
    turns: (enqueue) => createTurnParts(options, { runId, sessions, state, journal, slots, scrub, clock, usage: totals }, enqueue),
  });

  // 3. The run starts: ledger, run-start, what loading found, the restart's plan.
  let ledger: Ledger | undefined;
  if (options.ledger !== false) ledger = attachLedger(bus, options.layout.events(runId));
  if (!options.runTotals) bus.subscribe('usage', (event) => usage.add(event));
  bus.emit({ type: 'run-start', resumed: options.resumed });
  for (const startNotice of options.startNotices ?? []) notice(startNotice.level, startNotice.message);
  if (usageRead.issue) notice('warn', usageRead.issue);
  for (const issue of [...options.run.issues, ...(ledger?.issues ?? [])]) notice('warn', issue.message);
  for (const repair of options.run.repairs) {
    notice('info', `${repair.sessionId}: answered ${repair.answered.length} tool call(s) left open when Legion stopped ("interrupted")`, repair.sessionId);
  }
  const expiry = { approvals, audit };
  const drivesRun = (options.restartHandling ?? 'resume') === 'resume';
  let plan: ResumePlan = { resumes: [], dropped: drivesRun ? [...(options.run.leftOpen ?? [])] : [], requestIds: new Set() };
  try {
    // A hub's requests on disk are its workers' (`elsewhere`): none of them is this core's.
    const loaded = await approvals.load(options.elsewhere ? { idsOnly: true } : {});
    for (const issue of loaded.issues) notice('warn', issue);
    if (drivesRun) {
      plan = planResumes({ registry, approvals, sessions }, options.run.leftOpen ?? []);
      const expired = approvals.expire(loaded.pending.filter((r) => !plan.requestIds.has(r.requestId)).map((r) => r.requestId));
      for (const requestId of expired) auditExpired(expiry, requestId);
      if (expired.length > 0) {
        notice('info', `${expired.length} approval request(s) from before the restart expired: their turn ended when Legion stopped; the agent can ask again`);
      }
    }
  } catch (error) {
    notice('error', `could not read the approval requests of run ${runId}: ${messageOf(error)}`);
  }
  answerDropped({ sessions, journal }, plan.dropped);

  // 4. The commands front ends drive, then the resumed turns.
  const core = createCommands({
    runId, bus, registry, sessions, approvals, addAllowance: options.addAllowance, scrub, state, slots, journal, scheduler,
    ...(options.elsewhere ? { elsewhere: options.elsewhere } : {}),
    runStore: options.runStore,
    run: options.run.run,
    usage: totals,
    compact: turns.compact,
    ...(turns.prepareIsolation ? { prepareIsolation: turns.prepareIsolation } : {}),
    async close() {
      await usage.close();
      ledger?.close();
      options.onShutdown?.();
    },
  });
  startResumes({ approvals, slots, notice, headless: options.headless !== undefined, enqueue: scheduler.enqueue }, plan.resumes);
  return core;
}
