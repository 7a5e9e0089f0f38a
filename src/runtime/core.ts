import type { LegionConfig } from '../config/schema';
import type { EventBus } from '../events/bus';
import { attachLedger, type Ledger } from '../events/ledger';
import type { Layout } from '../storage/layout';
import type { LoadedRun, RunStore } from '../session/types';
import type { CollectiveRegistry } from '../collective/registry';
import type { ApprovalQueue } from '../authz/approvals';
import type { CollectiveServices } from '../collective/tools/services';
import { messageOf } from '../errors';
import { NO_SECRETS, type SecretScrubber } from '../authz/scrub';
import type {
  AddAllowance, AfterCall, ApproverPolicy, AuditSink, Authorize, BeforeBatch, DenialTracker, ExecuteTool, PriceOf, ResolveProvider, ToolCatalog, Triage, TurnHooks,
} from './ports';
import type { PromptExtras } from './stream';
import type { HeadlessMode } from './env';
import { RunState, createSlots } from './run-state';
import { createJournal } from './journal';
import { createCommunicator } from './delegation';
import { resolveByAgent } from './agent-approval';
import { createCommands, type Core } from './commands';
import { answerDropped, planResumes, startResumes, type ResumePlan } from './restart';
import { abandon, auditExpired } from './open-calls';
import { createUsageBook, readRunUsage } from './usage-book';
import { createRouter } from './approval-route';
import { createApproverTurns } from './approver-turn';
import { createScheduler, type Scheduler } from './scheduler';
import { runTurn, type TurnDeps } from './agent-loop';
import { createStreamOnce } from './stream';
import { createCompactNow, createContextStream } from './context-hook';
import { createBudgetGate } from './budget-gate';
import { createContextManager } from '../context/manager';
import type { RecallServices } from '../context/recall-tool';
import { createPrescan } from './prescan';
import { createResumePrepass } from './resume-prepass';
import { createDecideAsks } from './approval-phase';
import { createExecutePhase } from './execute-phase';
import { askUser } from './user-questions';
import type { Turn, TurnOutcome, TurnStart } from './turn';
import type { ToolContext } from '../tools/types';
import type { Worktrees } from '../worktrees/service';
import { createIsolation } from './merge-request';

export interface CoreOptions {
  readonly config: LegionConfig;
  readonly workspaceRoot: string;
  readonly layout: Layout;
  /**
   * The run, loaded (histories repaired) by the run store; the caller holds its lock. Sessions
   * it left open (`leaveOpen: leaveOpenFor(readPendingApprovals(…), …)`) are resumed or answered here.
   */
  readonly run: LoadedRun;
  readonly resumed: boolean;
  /** Saves run.json (title, updatedAt); optional in tests. */
  readonly runStore?: Pick<RunStore, 'save'>;
  readonly bus: EventBus;
  readonly registry: CollectiveRegistry;
  readonly tools: ToolCatalog;
  /** Runs a tool call: validation, path confinement, output cap (tools/execute-tool.ts). Required: no unconfined stand-in. */
  readonly executeTool: ExecuteTool;
  readonly resolveProvider: ResolveProvider;
  /** The rules and policies (authz/authorizer.ts). Required: no allow-everything stand-in. */
  readonly authorize: Authorize;
  readonly approvals: ApprovalQueue;
  readonly approvers: ApproverPolicy;
  readonly audit: AuditSink;
  readonly denials?: DenialTracker;
  readonly triage?: Triage;
  readonly priceOf?: PriceOf;
  readonly addAllowance?: AddAllowance;
  readonly clock?: () => Date;
  readonly headless?: HeadlessMode;
  /** Record every event to `runs/<runId>/events.jsonl` (default true). */
  readonly ledger?: boolean;
  /** Notices to emit right after `run-start` (config warnings, load issues). */
  readonly startNotices?: readonly { level: 'info' | 'warn' | 'error'; message: string }[];
  /** Last step of `shutdown` (release the run lock). */
  readonly onShutdown?: () => void;
  /** Known secrets to keep out of histories and streamed text (default: none). */
  readonly scrub?: SecretScrubber;
  /** Checkpoint hook around each batch that runs (docs/undo.md). */
  readonly beforeBatch?: BeforeBatch;
  /**
   * Set-up left out of start-up so the first frame need not wait for it (the sandbox probe, the
   * checkpoint store; docs/performance.md) and MCP servers still starting (docs/mcp.md): a turn
   * started by a message awaits it once the message is on disk, before its first model call, and
   * stops waiting when the turn is cancelled (`signal`). A turn resumed at start re-offers its
   * pending approvals at once (its calls run only once approved, and what runs waits for the
   * set-up itself: the shell for the probe, the batch for its checkpoint). Must not reject.
   */
  readonly beforeFirstCall?: (signal: AbortSignal) => Promise<void>;
  /** A model's context window from models.yaml (default: none listed, `context.defaultWindow` applies; docs/context.md). */
  readonly windowOf?: (model: string) => number | null;
  /** Project instructions and skills for every system prompt (docs/conventions.md). */
  readonly promptExtras?: PromptExtras;
  /** After each call that ran: notes for the agent (nested instructions, PostToolUse hooks). */
  readonly afterCall?: AfterCall;
  /** Claude-Code-compatible hooks (docs/conventions.md#hooks). */
  readonly hooks?: TurnHooks;
  /**
   * Wraps the turn's steps once they are built: engine mode journals the model call (docs/engine.md).
   * Must return deps that behave as the ones given when nothing is replayed.
   */
  readonly wrapTurn?: (deps: TurnDeps) => TurnDeps;
  /**
   * `resume` (default): resume the turns `run.leftOpen` names and expire every other pending approval
   * (this process drives the run). `none`: a worker of the engine building the core for one
   * session's turn (docs/engine.md): other sessions' open calls and pending approvals belong to
   * turns running elsewhere and are left alone.
   */
  readonly restartHandling?: 'resume' | 'none';
  /**
   * Add this core's usage to the run's totals (`usage.json`; default true). A worker of the engine
   * does not: the hub counts the usage events it forwards (docs/engine.md#what-is-not-durable).
   */
  readonly keepsRunTotals?: boolean;
  /** Worktree isolation of sessions (docs/worktrees.md); absent: isolation is refused. */
  readonly worktrees?: Worktrees;
  /**
   * Runs a turn instead of `runTurn` (agent-loop.ts): engine mode's hub sends it to the engine
   * (docs/engine.md#streaming-and-the-hub). Must never reject and must settle once the turn ended.
   */
  readonly turnRunner?: (turn: Turn, start: TurnStart, deps: TurnDeps) => Promise<TurnOutcome>;
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
  const { config, bus, registry, tools, approvals } = options;
  const runId = options.run.run.id;
  const sessions = options.run.sessions;
  const clock = options.clock ?? (() => new Date());
  const scrub = options.scrub ?? NO_SECRETS;
  const { audit, approvers } = options;
  const headless = options.headless;

  const state = new RunState();
  const isStopping = (): boolean => state.stopping;
  const journal = createJournal({ bus, scrub, clock, ...(options.priceOf ? { priceOf: options.priceOf } : {}) });
  const { notice } = journal;
  const slots = createSlots(state.slots, sessions, bus);
  const expiry = { approvals, audit };
  const abandonChild = (child: Parameters<typeof abandon>[1]): void => abandon({ ...expiry, sessions, journal }, child);

  // Lower modules that must start a turn get `enqueue` passed in; it is bound once the scheduler exists.
  let scheduler: Scheduler | undefined;
  const enqueue: Scheduler['enqueue'] = (slot, request) => scheduler!.enqueue(slot, request);

  // Hooks and nested instructions see each session's own root (its worktree when isolated); rootOf is read at call time.
  const rooted = <T extends { sessionId: string }>(t: T): T & { root: string } => ({ ...t, root: rootOf(t.sessionId) });
  const hooks: TurnHooks | undefined = options.hooks && {
    preToolUse: (call, verdict, signal) => options.hooks!.preToolUse(rooted(call), verdict, signal),
    postToolUse: (call, result, signal) => options.hooks!.postToolUse(rooted(call), result, signal),
    promptSubmit: (turn, text, first, signal) => options.hooks!.promptSubmit(rooted(turn), text, first, signal),
    stop: (turn, active, signal) => options.hooks!.stop(rooted(turn), active, signal),
  };
  const afterCall: AfterCall | undefined = options.afterCall && ((turn, call, result, signal) => options.afterCall!(rooted(turn), call, result, signal));
  const prescan = createPrescan({
    bus, tools, authorize: options.authorize, audit, denials: options.denials, notice, ...(hooks ? { hooks } : {}),
    ...(options.worktrees ? { isolatedRoot: options.worktrees.rootOf } : {}),
  });
  // What a restart adds (resume-prepass.ts): the pre-pass, and the resumed turns a resumed batch's calls re-attach to.
  const resume = createResumePrepass({ prescan, approvals, tools, abandon: abandonChild });
  const deliverOutsideChain = createApproverTurns({ approvals, tools, slots, inbox: state.approverInbox, isStopping, enqueue, climb: (r) => router.climb(r) });
  const router = createRouter({ approvals, approvers, headless, askers: state.askers, deliverOutsideChain });
  let mergeIds = 0;
  const isolation = options.worktrees ? createIsolation({
    worktrees: options.worktrees, approvals, approvers, askers: state.askers, route: router.route, audit, notice,
    setStatus: journal.setStatus, beforeBatch: options.beforeBatch, diffFile: options.layout.worktreeDiff,
    newId: () => `${Date.now().toString(36)}-${++mergeIds}`,
  }) : undefined;
  /** The root a session's tools act in: its worktree when isolated, else the workspace. */
  const rootOf = (sessionId: string): string => isolation?.rootOf(sessionId) ?? options.workspaceRoot;
  const communicator = createCommunicator({
    registry, tools, maxDepth: config.runtime.maxDepth, slots, takeResumedChild: resume.takeChild, setStatus: journal.setStatus, router, enqueue,
    askUser: (turn, context, name, text) => askUser({ headless, slots, journal }, turn, context, name, text),
    isolationDefault: config.isolation.default,
    ...(isolation ? { prepareIsolation: isolation.prepare } : {}),
  });
  const services: CollectiveServices & RecallServices = {
    registry,
    tools,
    communicate: (context, input) => communicator.communicate(context, input),
    resolveApproval: (context, input) => resolveByAgent({ approvals, tools }, context, input),
    sessionHistory: (sessionId) => {
      const session = sessions.get(sessionId);
      return session ? { messages: session.messages(), records: session.contextRecords() } : undefined;
    },
  };
  // Request sizes and compaction before each provider call (docs/context.md).
  const context = createContextManager({
    settings: config.context,
    windowOf: options.windowOf ?? (() => null),
    emit: (event) => bus.emit(event),
    notice: (level, message, sessionId) => notice(level, message, sessionId),
    now: () => clock().toISOString(),
  });
  const toolContext = (turn: Turn, toolUseId: string): ToolContext => ({
    workspaceRoot: rootOf(turn.session.id),
    runId,
    sessionId: turn.session.id,
    participantId: turn.agent.id,
    chain: turn.chain,
    toolUseId,
    signal: turn.controller.signal,
    limits: { shellTimeoutMs: config.runtime.shellTimeoutMs, toolOutputLimit: config.runtime.toolOutputLimit },
    services,
  });

  const execute = createExecutePhase({
    workspaceRoot: options.workspaceRoot, executeTool: options.executeTool, toolContext,
    isStopping, closingResumed: resume.closing, beforeBatch: options.beforeBatch, ...(afterCall ? { afterCall } : {}),
    ...(isolation ? { isolatedRoot: isolation.rootOf } : {}),
  });
  const turnDeps: TurnDeps = {
    maxIterations: config.runtime.maxIterations,
    resolveProvider: options.resolveProvider,
    stream: createContextStream({
      context, stream: createStreamOnce({ bus, tools, workspaceRoot: options.workspaceRoot, rootOf, scrub, usage: journal.usage, notice, promptExtras: options.promptExtras }),
      tools, workspaceRoot: options.workspaceRoot, rootOf, usage: journal.usage, notice, now: () => clock().toISOString(), promptExtras: options.promptExtras,
      // The usage book is built below; the gate reads it only once turns run.
      budget: createBudgetGate({ settings: config.budgets, usage: () => usage.totals(), approvals, route: router.route, headless, notice }),
    }),
    openBatch: prescan.open,
    prescan: prescan.scan,
    resumeCalls: resume.resumeCalls,
    decideAsks: createDecideAsks({
      approvals, approvers, triage: config.escalation.llm.enabled ? options.triage : undefined, audit, notice,
      askers: state.askers, route: router.route, track: prescan.track,
      toolNote: (name) => tools.get(name)?.approvalNote,
    }),
    runCalls: execute.runCalls,
    closeBatch: execute.close,
    append: journal.append,
    now: journal.now,
    setStatus: journal.setStatus,
    notice,
    collectNews: communicator.collectNews,
    isStopping,
    isLeftOpen: (turn) => state.isLeftOpen(turn),
    ...(options.beforeFirstCall ? { beforeFirstCall: options.beforeFirstCall } : {}),
    ...(hooks ? { hooks } : {}),
  };
  const stepsOfTurn = options.wrapTurn ? options.wrapTurn(turnDeps) : turnDeps;
  const turnRunner = options.turnRunner ?? runTurn;
  scheduler = createScheduler({
    state,
    participant: (id) => registry.get(id),
    notice,
    runTurn: isolation
      ? async (turn, start) => {
        const outcome = await turnRunner(turn, start, stepsOfTurn);
        const after = await isolation.afterTurn(turn, outcome);
        if (after !== outcome && after.kind !== 'interrupted' && after.merge) notice('info', `${turn.agent.id}: ${after.merge.split('\n')[0]}`, turn.session.id);
        return after;
      }
      : (turn, start) => turnRunner(turn, start, stepsOfTurn),
    climbUnanswered: router.climbUnanswered,
  });

  let ledger: Ledger | undefined;
  if (options.ledger !== false) ledger = attachLedger(bus, options.layout.events(runId));
  // Token and cost totals continue across restarts (runs/<runId>/usage.json).
  const usageFile = options.layout.usage(runId);
  const usageRead = await readRunUsage(usageFile);
  const usage = createUsageBook({ file: usageFile, seed: usageRead.usage, onError: (message) => notice('warn', message) });
  if (options.keepsRunTotals !== false) bus.subscribe('usage', (event) => usage.add(event));
  bus.emit({ type: 'run-start', resumed: options.resumed });
  for (const startNotice of options.startNotices ?? []) notice(startNotice.level, startNotice.message);
  if (usageRead.issue) notice('warn', usageRead.issue);
  for (const issue of [...options.run.issues, ...(ledger?.issues ?? [])]) notice('warn', issue.message);
  for (const repair of options.run.repairs) {
    notice('info', `${repair.sessionId}: answered ${repair.answered.length} tool call(s) left open when Legion stopped ("interrupted")`, repair.sessionId);
  }
  const drivesRun = (options.restartHandling ?? 'resume') === 'resume';
  let plan: ResumePlan = { resumes: [], dropped: drivesRun ? [...(options.run.leftOpen ?? [])] : [], requestIds: new Set() };
  try {
    const loaded = await approvals.load();
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

  const core = createCommands({
    runId, bus, registry, sessions, approvals, addAllowance: options.addAllowance, scrub, state, slots, journal, scheduler,
    runStore: options.runStore,
    run: options.run.run,
    usage: () => usage.totals(),
    compact: createCompactNow({
      context, tools, workspaceRoot: options.workspaceRoot, rootOf, usage: journal.usage, notice, now: () => clock().toISOString(), promptExtras: options.promptExtras,
      session: (id) => sessions.get(id),
      agent: (id) => {
        const p = registry.get(id);
        return p && p.kind === 'agent' ? p : undefined;
      },
      resolveProvider: options.resolveProvider,
      isBusy: (id) => state.slots.get(id)?.busy ?? false,
    }),
    async close() {
      await usage.close();
      ledger?.close();
      options.onShutdown?.();
    },
  });
  startResumes({ approvals, slots, notice, headless: headless !== undefined, enqueue }, plan.resumes);
  if (isolation) core.prepareIsolation = isolation.prepare;
  return core;
}
