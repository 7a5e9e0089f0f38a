import type { LegionConfig } from '../config/schema';
import type { EventBus } from '../events/bus';
import type { Layout } from '../storage/layout';
import type { SessionStore } from '../session/types';
import type { CollectiveRegistry } from '../collective/registry';
import { USER_ID } from '../collective/participant';
import { createCollectiveTools } from '../collective/tools';
import type { ApprovalQueue } from '../authz/approvals';
import type { SecretScrubber } from '../authz/scrub';
import { personOnly } from '../authz/policy';
import { catalogWith } from '../tools/registry';
import type { ToolCatalog, ToolContext } from '../tools/types';
import type { Worktrees } from '../worktrees/service';
import { createContextManager } from '../context/manager';
import type {
  AfterCall, ApprovalsAcross, ApproverPolicy, AuditSink, Authorize, BeforeBatch, DenialTracker, ExecuteTool, ResolveProvider, Triage, TurnHooks,
} from './ports';
import type { HeadlessMode } from './env';
import type { PromptExtras } from './stream';
import type { Journal } from './journal';
import type { RunState, Slots } from './run-state';
import type { Scheduler, TurnRunning } from './scheduler';
import type { RunUsage } from './usage-book';
import { abandon } from './open-calls';
import { createRouter } from './approval-route';
import { createApproverTurns } from './approver-turn';
import { createCommunicator, type CommunicatorDeps } from './delegation';
import { resolveByAgent } from './agent-approval';
import { askUser } from './user-questions';
import { createIsolation } from './merge-request';
import { runTurn, type TurnDeps } from './agent-loop';
import { createStreamOnce } from './stream';
import { createCompactNow, createContextStream } from './context-hook';
import { createBudgetGate } from './budget-gate';
import { createPrescan } from './prescan';
import { createResumePrepass } from './resume-prepass';
import { createDecideAsks } from './approval-phase';
import { createExecutePhase } from './execute-phase';
import type { Turn, TurnOutcome, TurnStart } from './turn';

/** What the core is given for running turns (part of `CoreOptions`, core.ts). */
export interface TurnOptions {
  readonly config: LegionConfig;
  readonly workspaceRoot: string;
  readonly layout: Layout;
  readonly bus: EventBus;
  readonly registry: CollectiveRegistry;
  /** The run's workspace tools (built-in, MCP); the core adds the collective tools, built with what they use. */
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
  readonly headless?: HeadlessMode;
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
  /** Worktree isolation of sessions (docs/worktrees.md); absent: isolation is refused. */
  readonly worktrees?: Worktrees;
  /**
   * Runs a turn instead of `runTurn` (agent-loop.ts): engine mode's hub sends it to the engine
   * (docs/engine.md#streaming-and-the-hub). Must never reject and must settle once the turn ended.
   */
  readonly turnRunner?: (turn: Turn, start: TurnStart, deps: TurnDeps) => Promise<TurnOutcome>;
  /**
   * Engine mode on a worker (docs/engine.md#delegation): a delegation runs as a durable call to
   * the target session's object instead of in this core (delegation.ts `runsElsewhere` says when).
   */
  readonly delegateElsewhere?: CommunicatorDeps['delegateElsewhere'];
  /** Engine mode on a worker: a step of the caller's invocation (delegation.ts `durableStep`). */
  readonly durableStep?: CommunicatorDeps['durableStep'];
  /** Engine mode on a worker: approval requests between the invocations of a chain (docs/engine.md#approvals-across-objects). */
  readonly approvalsAcross?: ApprovalsAcross;
}

/** The run's records the turn parts write to (built first by the core). */
export interface TurnRecords {
  readonly runId: string;
  readonly sessions: SessionStore;
  readonly state: RunState;
  readonly journal: Journal;
  readonly slots: Slots;
  readonly scrub: SecretScrubber;
  readonly clock: () => Date;
  /** The run's usage totals so far (the budget gate). */
  usage(): RunUsage;
}

/** What runs turns, and what the core's commands need of it. */
export interface TurnParts extends TurnRunning {
  /** The run's whole catalog: the workspace tools and the collective tools. */
  readonly tools: ToolCatalog;
  /** Compact a session now (the `compact` command). */
  readonly compact: ReturnType<typeof createCompactNow>;
  /** Make a session's worktree ready (absent without worktree isolation). */
  readonly prepareIsolation?: ReturnType<typeof createIsolation>['prepare'];
}

/**
 * Everything a turn runs with, built in dependency order from the scheduler's `enqueue`
 * (scheduler.ts `turns`): inside `catalogWith`, approval routing, isolation, the pre-scan, the
 * restart pre-pass, the communicator and the collective tools (typed dependencies, no service
 * locator); then the context manager, the execute phase and the turn's steps.
 */
export function createTurnParts(options: TurnOptions, records: TurnRecords, enqueue: Scheduler['enqueue']): TurnParts {
  const { config, bus, registry, approvals, audit, approvers, headless } = options;
  const { sessions, state, journal, slots, clock } = records;
  const { notice } = journal;
  const isStopping = (): boolean => state.stopping;
  const abandonChild = (child: Parameters<typeof abandon>[1]): void => abandon({ approvals, audit, sessions, journal }, child);

  let mergeIds = 0;
  // The catalog and what reads it (routing, the pre-scan and pre-pass, the communicator), then the
  // collective tools built with what they use; the catalog holds them (catalogWith, tools/registry.ts).
  const { catalog: tools, parts } = catalogWith(options.tools, (catalog) => {
    // Approval routing; an approver outside the chain gets a turn of its own (approver-turn.ts), whose leftovers climb.
    const router = createRouter({
      approvals, approvers, headless, askers: state.askers,
      ...(options.approvalsAcross ? { across: options.approvalsAcross } : {}),
      outsideChain: (climb) => createApproverTurns({ approvals, tools: catalog, slots, inbox: state.approverInbox, isStopping, enqueue, climb }),
    });
    const isolation = options.worktrees ? createIsolation({
      worktrees: options.worktrees, approvals, approvers, askers: state.askers, route: router.route, audit, notice,
      setStatus: journal.setStatus, beforeBatch: options.beforeBatch, diffFile: options.layout.worktreeDiff,
      newId: () => `${Date.now().toString(36)}-${++mergeIds}`,
      onlyAPerson: (turn, path, deleted) => personOnly(options.authorize({
        toolName: deleted ? 'file_delete' : 'file_write', input: deleted ? { path } : { path, content: '' },
        participantId: turn.agent.id, sessionId: turn.session.id, chain: turn.chain,
      })),
    }) : undefined;
    /** The root a session's tools act in: its worktree when isolated, else the workspace. */
    const rootOf = (sessionId: string): string => isolation?.rootOf(sessionId) ?? options.workspaceRoot;
    // Hooks and nested instructions see each session's own root (its worktree when isolated).
    const rooted = <T extends { sessionId: string }>(t: T): T & { root: string } => ({ ...t, root: rootOf(t.sessionId) });
    const given = options.hooks;
    const hooks: TurnHooks | undefined = given && {
      preToolUse: (call, verdict, signal) => given.preToolUse(rooted(call), verdict, signal),
      postToolUse: (call, result, signal) => given.postToolUse(rooted(call), result, signal),
      promptSubmit: (turn, text, first, signal) => given.promptSubmit(rooted(turn), text, first, signal),
      stop: (turn, active, signal) => given.stop(rooted(turn), active, signal),
    };
    const givenAfterCall = options.afterCall;
    const afterCall: AfterCall | undefined = givenAfterCall && ((turn, call, result, signal) => givenAfterCall(rooted(turn), call, result, signal));
    const prescan = createPrescan({
      bus, tools: catalog, authorize: options.authorize, audit, denials: options.denials, notice, ...(hooks ? { hooks } : {}),
      ...(isolation ? { isolatedRoot: isolation.rootOf } : {}),
    });
    // What a restart adds (resume-prepass.ts): the pre-pass, and the resumed turns a resumed batch's calls re-attach to.
    const resume = createResumePrepass({ prescan, approvals, tools: catalog, abandon: abandonChild });
    const communicator = createCommunicator({
      registry, tools: catalog, maxDepth: config.runtime.maxDepth, slots, takeResumedChild: resume.takeChild, setStatus: journal.setStatus, router, enqueue,
      askUser: (turn, context, name, text) => askUser({ headless, slots, journal }, turn, context, name, text),
      isolationDefault: config.isolation.default,
      ...(isolation ? { prepareIsolation: isolation.prepare } : {}),
      ...(options.delegateElsewhere ? { delegateElsewhere: options.delegateElsewhere } : {}),
      ...(options.durableStep ? { durableStep: options.durableStep } : {}),
    });
    const collective = createCollectiveTools({
      registry,
      tools: catalog,
      communicate: communicator.communicate,
      resolveApproval: (context, input) => resolveByAgent({ approvals, tools: catalog, ...(options.approvalsAcross ? { across: options.approvalsAcross } : {}) }, context, input),
      sessionHistory: (sessionId) => {
        const session = sessions.get(sessionId);
        return session ? { messages: session.messages(), records: session.contextRecords() } : undefined;
      },
    });
    return { tools: collective, parts: { router, isolation, rootOf, hooks, afterCall, prescan, resume, communicator } };
  });
  const { router, isolation, rootOf, hooks, afterCall, prescan, resume, communicator } = parts;

  // Request sizes and compaction before each provider call (docs/context.md).
  const context = createContextManager({
    settings: config.context,
    windowOf: options.windowOf ?? (() => null),
    emit: (event) => bus.emit(event),
    notice: (level, message, sessionId) => notice(level, message, sessionId),
    now: () => clock().toISOString(),
  });
  const toolContext = (turn: Turn, toolUseId: string): ToolContext => {
    const call: ToolContext = {
      workspaceRoot: rootOf(turn.session.id),
      runId: records.runId,
      sessionId: turn.session.id,
      participantId: turn.agent.id,
      chain: turn.chain,
      toolUseId,
      signal: turn.controller.signal,
      limits: { shellTimeoutMs: config.runtime.shellTimeoutMs, toolOutputLimit: config.runtime.toolOutputLimit },
      // In the calling agent's user lane, as a communicator call to the user would.
      askUser: (question, ask) => communicator.communicate({ ...call, signal: ask.signal }, { targetId: USER_ID, message: question, sessionName: ask.sessionName }),
    };
    return call;
  };

  const execute = createExecutePhase({
    workspaceRoot: options.workspaceRoot, executeTool: options.executeTool, toolContext,
    isStopping, closingResumed: resume.closing, beforeBatch: options.beforeBatch, ...(afterCall ? { afterCall } : {}),
    ...(isolation ? { isolatedRoot: isolation.rootOf } : {}),
  });
  const contextTurn = {
    context, tools, workspaceRoot: options.workspaceRoot, rootOf, usage: journal.usage, notice, now: () => clock().toISOString(), promptExtras: options.promptExtras,
  };
  const turnDeps: TurnDeps = {
    maxIterations: config.runtime.maxIterations,
    resolveProvider: options.resolveProvider,
    stream: createContextStream({
      ...contextTurn,
      stream: createStreamOnce({ bus, tools, workspaceRoot: options.workspaceRoot, rootOf, scrub: records.scrub, usage: journal.usage, notice, promptExtras: options.promptExtras }),
      budget: createBudgetGate({ settings: config.budgets, usage: records.usage, approvals, route: router.route, headless, notice }),
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
  return {
    tools,
    runTurn: isolation
      ? async (turn, start) => {
        const outcome = await turnRunner(turn, start, stepsOfTurn);
        const after = await isolation.afterTurn(turn, outcome);
        if (after !== outcome && after.kind !== 'interrupted' && after.merge) notice('info', `${turn.agent.id}: ${after.merge.split('\n')[0]}`, turn.session.id);
        return after;
      }
      : (turn, start) => turnRunner(turn, start, stepsOfTurn),
    climbUnanswered: router.climbUnanswered,
    compact: createCompactNow({
      ...contextTurn,
      session: (id) => sessions.get(id),
      agent: (id) => {
        const p = registry.get(id);
        return p && p.kind === 'agent' ? p : undefined;
      },
      resolveProvider: options.resolveProvider,
      isBusy: (id) => state.slots.get(id)?.busy ?? false,
    }),
    ...(isolation ? { prepareIsolation: isolation.prepare } : {}),
  };
}
