import { hostname, homedir } from 'node:os';
import { join } from 'node:path';
import type { CommandContext } from './command';
import { LegionError, messageOf } from '../errors';
import { defaultConfigFiles, loadConfig } from '../config/load';
import { layoutFor } from '../storage/layout';
import { checkWorkspace } from '../storage/workspace';
import { tightenOnStart, userConfigDir } from '../storage/private-mode';
import { initWorkspace } from '../collective/init';
import { createParticipantStore } from '../collective/store';
import { loadTemplates } from '../collective/templates';
import { createRegistry } from '../collective/registry';
import { RESOURCE_AGENT_ID, USER_ID, UR_AGENT_ID } from '../collective/participant';
import { agentFileDirs, loadAgentFiles } from '../conventions/agent-files';
import { createBus, type EventBus } from '../events/bus';
import { createRunStore } from '../session/run-store';
import { acquireRunLock, releaseOnExit } from '../session/lock';
import { randomIds } from '../session/ids';
import type { RunRecord } from '../session/types';
import { createApprovalQueue, readPendingApprovals, type ApprovalQueue } from '../authz/approvals';
import { loadRuleFiles, defaultRuleFiles } from '../authz/rules/load';
import { grantGuard } from '../authz/grant-guard';
import { createApproverPolicy } from '../authz/approver';
import { createDenialTracker } from '../authz/denial-tracker';
import { secretsFromEnv } from '../authz/redact';
import { createSecretScrubber } from '../authz/scrub';
import { createProviderRegistry } from '../providers/select';
import { defaultPricingFiles, loadPricing } from '../providers/pricing';
import { createBuiltinTools, createToolRegistry, withDynamicTools } from '../tools/registry';
import { COLLECTIVE_TOOL_NAMES, SHIPPED_TOOLS } from '../collective/tools/shipped';
import { composeSandbox, secretPatternsOf } from './compose-sandbox';
import { secretPathMatcher } from '../tools/sandbox/secrets';
import { trustedRunFiles } from './trusted-run-files';
import { trustFilePath } from '../mcp/trust';
import { hooksTrustFile } from '../conventions/hooks/trust';
import { executeTool } from '../tools/execute-tool';
import { createFileTodoStore } from '../tools/todo-store';
import { createCore, type CoreOptions } from '../runtime/core';
import type { TurnDeps } from '../runtime/agent-loop';
import type { ExecuteTool } from '../runtime/ports';
import { createWorktrees } from '../worktrees/service';
import { engineTurns, type EngineTurns } from '../engine/hub-turn';
import { createProjectionFollower } from '../engine/projection-follower';
import { approvalsOnWorkers } from '../engine/hub-approvals';
import { engineUrls, reachEngine } from './engine-settings';
import { sandboxReachRefusal } from '../engine/sandbox-reach';
import type { Core } from '../runtime/commands';
import type { ScreenSession } from '../runtime/core-api';
import type { HeadlessMode } from '../runtime/env';
import { lastLedgerSeq } from '../runtime/ledger-seq';
import { leaveOpenFor } from '../runtime/resume-plan';
import { composeAuthz } from './compose-parts';
import { composeCheckpoints } from './compose-checkpoints';
import { withoutYoungGrowth } from './young-generation';
import { setupMcp } from '../mcp/compose-mcp';
import { createMcpTurnWait } from '../mcp/first-turn-wait';
import { createMcpManager, type McpManager } from '../mcp/manager';
import { VERSION } from './version';
import { createHistoryService } from '../session/history-service';
import { startRemoteParts } from './compose-remote';
import type { ComposeTestHooks } from './compose-test-hooks';
import { composeWorkflows } from './compose-workflows';
import { composeConventions } from './compose-conventions';
import type { WorkflowService } from '../workflows/service';
import { keyArgumentOf } from '../collective/tools/shipped';
import { realWorkspaceRoot } from './workspace-root';
import { checkWorkspaceTrust, trustKeyFile, trustPlace, untrustedNotice, type WorkspaceTrust } from '../storage/workspace-trust';
import { registerUsed, trustRegistryFile } from '../storage/trust-registry';

/** Statuses in which an agent is at work in its session (undo refuses to change its files then). */
const BUSY: ReadonlySet<string> = new Set(['thinking', 'running-tool', 'waiting-approval']);

export interface ComposeOptions {
  /** Resume this run (`--run <id>`). */
  readonly runId?: string;
  /** Start a new run (`--new`). */
  readonly newRun?: boolean;
  /** `legion run`: no user; what would reach the user is decided per `approve`. */
  readonly headless?: HeadlessMode;
  /** Called with the run's bus before anything is emitted (`legion run --json` sees `run-start`). */
  readonly onBus?: (bus: EventBus) => void;
  /** Where lines for an operator go (`legion serve`'s log): the Telegram updates ignored from other chats. */
  readonly log?: (line: string) => void;
  /**
   * A worker of the engine builds the core for one turn of a run it does not lock (docs/engine.md):
   * no run lock (the engine runs one turn per session), no session repaired at load, no resume,
   * and the turn's steps journaled by these wrappers.
   */
  readonly worker?: {
    wrapTurn(deps: TurnDeps): TurnDeps;
    wrapExecute(execute: ExecuteTool): ExecuteTool;
    /** A delegation as a durable call to the target session's object (docs/engine.md#delegation). */
    delegate: NonNullable<CoreOptions['delegateElsewhere']>;
    /** A step of the caller's invocation (preparing a delegate's worktree, docs/engine.md#delegation). */
    step: NonNullable<CoreOptions['durableStep']>;
    /** Approval requests between the invocations of a chain (docs/engine.md#approvals-across-objects). */
    across: NonNullable<CoreOptions['approvalsAcross']>;
    /** The run's usage totals as the hub last wrote them, with this core's usage since (budgets read them). */
    runTotals: NonNullable<CoreOptions['runTotals']>;
  };
  /** Tests only (test/helpers/app-harness.ts): a provider, extra tools, a triage; see compose-test-hooks.ts. */
  readonly testHooks?: ComposeTestHooks;
}

/**
 * Everything a front end needs for one run: what a full-screen front end gets
 * (`ScreenSession`, src/runtime/core-api.ts), with the core's wider `Core` side and what
 * `legion run` needs besides.
 */
export interface AppSession extends ScreenSession {
  readonly core: Core;
  /** MCP servers (docs/mcp.md): nothing runs until a front end calls `mcp.start()` (the TUI: after its first frame). */
  readonly mcp: McpManager;
  /** Workflows of the run (docs/workflows.md) as `legion run --workflow` drives them; front ends use `workflows`, over it. */
  readonly workflowService: WorkflowService;
  /** The workspace's trust, computed once at start (docs/workspace-trust.md), for what runs beside the core (serve addons). */
  readonly trust: WorkspaceTrust;
  /** Resume the workflows a previous process left running (once; `startBackground` calls it too). */
  resumeWorkflows(): Promise<void>;
  /** What must not delay a first frame (docs/performance.md): the sandbox probe, the checkpoint store, `mcp.start()`, `resumeWorkflows()`. For a screen to call once drawn. */
  startBackground(): void;
  /** Start the sandbox probe and the checkpoint store if not yet, and settle once both are done (their notices emitted). Never rejects. */
  settleBackground(): Promise<void>;
}

/**
 * The composition root: config → workspace → rules → providers → run (+ lock) → tools,
 * collective, authorization, approvals → core. Every failure the user can fix is a
 * LegionError with one line naming the file or setting; the run lock is released on any
 * failure after it was taken.
 */
export async function composeApp(context: CommandContext, options: ComposeOptions = {}): Promise<AppSession> {
  const { io, appDir } = context;
  const env = io.env;
  const warnings: string[] = [];
  const clock = (): Date => new Date();
  // API keys never reach .legion/ nor any event: every writer and the bus scrub their values.
  const secrets = secretsFromEnv(env);
  const scrubber = createSecretScrubber(secrets);
  const scrub = scrubber.value;

  const workspaceRoot = await realWorkspaceRoot(context.workspaceRoot);
  const home = env.HOME || homedir();
  // Workspace trust (docs/workspace-trust.md): computed once here; every project-layer loader below requires it.
  const place = trustPlace(workspaceRoot, env, home);
  let trust = await checkWorkspaceTrust(place);
  const untrusted = untrustedNotice(trust);
  if (untrusted) warnings.push(untrusted);
  const configFiles = defaultConfigFiles(appDir, workspaceRoot, home, trust);
  const loaded = await loadConfig(configFiles);
  if (!loaded.ok) throw new LegionError(loaded.error);
  const config = loaded.config;
  warnings.push(...loaded.warnings);

  const layout = layoutFor(workspaceRoot);
  const check = await checkWorkspace(layout);
  if (!check.ok) throw new LegionError(check.error);
  // Engine mode (docs/engine.md): this process is the hub and turns run on the engine's workers.
  const engineUrlsHere = !options.worker && config.engine.kind === 'restate' ? engineUrls(config.engine, layout.legionDir, trust) : undefined;
  // A sandboxed command must not reach the engine or a worker's feed (docs/sandbox.md#limits): refused before anything runs.
  if (engineUrlsHere || options.worker) {
    const refusal = await sandboxReachRefusal({ network: config.sandbox.network, engine: engineUrlsHere ? [engineUrlsHere.ingress, engineUrlsHere.admin] : [], workerHere: options.worker !== undefined });
    if (refusal) throw new LegionError(refusal);
  }
  const engineAt = engineUrlsHere ? await reachEngine(engineUrlsHere) : undefined;
  // Files of an older, world-readable workspace become private, with one notice (docs/cli-conventions.md).
  // The trust key is left as it is: a key others could read stays refused (never silently re-trusted).
  const tightened = await tightenOnStart([...(check.exists ? [layout.legionDir] : []), userConfigDir(env, env.HOME || homedir())], new Set([trustKeyFile(place.userDir)]));
  if (tightened) warnings.push(tightened);
  const participantStore = createParticipantStore(layout, { scrub });
  let participants = check.exists ? await participantStore.loadAll(trust) : [];
  if (!participants.some((p) => p.id === USER_ID) || !participants.some((p) => p.id === UR_AGENT_ID)) {
    const init = await initWorkspace({ appDir, workspaceRoot, userDir: place.userDir });
    // A `.legion/` Legion just created is the user's: trusted from here on (it holds nothing else yet).
    if (!check.exists) trust = await checkWorkspaceTrust(place);
    participants = await participantStore.loadAll(trust);
    if (!check.exists) warnings.push(`created ${layout.legionDir} with the default collective`);
    if (init.trustProblem) warnings.push(init.trustProblem);
  }
  // Untrusted, this `.legion/` still holds transcripts and a web token: known to the sandbox from now on (docs/workspace-trust.md#the-registry).
  if (!trust.trusted && trust.reason !== 'unreadable') {
    const used = registerUsed(trustRegistryFile(place.userDir), workspaceRoot);
    if (!used.ok) warnings.push(`could not record ${layout.legionDir} in the trust registry (${used.error}): sandboxed commands of an enclosing workspace may read its transcripts`);
  }

  const knownTools = new Set([...SHIPPED_TOOLS, ...(options.testHooks?.tools ?? [])].map((t) => t.name));
  // Agent files (docs/conventions.md#agent-files): participants defined in Markdown; a file wins over a stored participant of its id.
  const agentFiles = await loadAgentFiles(agentFileDirs(userConfigDir(env, env.HOME || homedir()), workspaceRoot), {
    toolExists: (name) => knownTools.has(name), reserved: new Set([USER_ID, UR_AGENT_ID, RESOURCE_AGENT_ID]),
  });
  warnings.push(...agentFiles.problems);
  if (agentFiles.files.length > 0) {
    const fromFiles = new Set(agentFiles.files.map((f) => f.agent.id));
    participants = [...participants.filter((p) => !fromFiles.has(p.id)), ...agentFiles.files.map((f) => f.agent)];
  }

  const rules = await loadRuleFiles(defaultRuleFiles(appDir, workspaceRoot, env, trust));
  if (!rules.ok) throw new LegionError(rules.error);
  const mcpSetup = await setupMcp({ config, layout, env });
  warnings.push(...mcpSetup.warnings);

  const selected = await createProviderRegistry({
    config, env, appDir, cwd: io.cwd,
    overrides: { ...(context.args.global.provider ? { provider: context.args.global.provider } : {}), ...(context.args.global.model ? { model: context.args.global.model } : {}) },
  });
  if (!selected.ok) throw new LegionError(selected.error);
  const providers = selected.registry;
  if (providers.notice) warnings.push(providers.notice);
  if (providers.demo) {
    // The demo script talks to agents of config/demo-agents/: present for this process only, never saved.
    const extra = await loadTemplates(join(appDir, 'config', 'demo-agents')).catch(() => []);
    participants = [...participants, ...extra.filter((t) => !participants.some((p) => p.id === t.id))];
  }
  const pricing = await loadPricing(defaultPricingFiles(appDir, workspaceRoot, home, trust));
  if (!pricing.ok) warnings.push(`${pricing.error} (costs are not shown)`);

  const runStore = createRunStore(layout, clock, randomIds);
  let run: RunRecord;
  let resumed: boolean;
  if (options.runId !== undefined) {
    const found = await runStore.get(options.runId);
    if (!found) throw new LegionError(`no run "${options.runId}" in ${layout.runsDir} (see legion runs)`);
    run = found;
    resumed = true;
  } else {
    const latest = options.newRun ? null : await runStore.latest();
    run = latest ?? (await runStore.create(clock()));
    resumed = latest !== null;
  }
  const worker = options.worker;
  const locked = worker ? { ok: true as const, lock: { release: () => undefined } } : acquireRunLock(layout, run.id, { pid: process.pid, hostname: hostname(), now: clock() });
  if (!locked.ok) throw new LegionError(locked.error);
  const lock = locked.lock;
  if ('recovered' in locked && locked.recovered) {
    warnings.push(`took over the lock of run ${run.id}${locked.previous ? ` from pid ${locked.previous.pid}, which is gone` : ' (the lock file was unreadable)'}`);
  }
  const unregisterExit = releaseOnExit(lock);
  try {
    // Turns of the user's lanes left waiting on approvals stay open: the core resumes them.
    const pendingApprovals = await readPendingApprovals(layout.approvals(run.id));
    const isActiveAgent = (id: string): boolean => participants.some((p) => p.id === id && p.kind === 'agent' && p.status === 'active');
    // A worker leaves every open call alone: other sessions' turns may be running on other workers.
    const leaveOpen = worker || engineAt ? (open: readonly { sessionId: string }[]) => new Set(open.map((o) => o.sessionId)) : leaveOpenFor(pendingApprovals, isActiveAgent);
    const loadedRun = await withoutYoungGrowth(() => runStore.load(run, clock(), { leaveOpen, ...(engineAt ? { writtenElsewhere: true } : {}) }));
    const bus = createBus({
      runId: run.id,
      startSeq: await lastLedgerSeq(layout.events(run.id)),
      onSubscriberError: (error) => {
        if (env.LEGION_DEBUG === '1') io.stderr(`legion: event subscriber failed: ${messageOf(error)}\n`);
      },
      ...(scrubber.active ? { transform: scrub } : {}),
    });
    options.onBus?.(bus);
    const headless = options.headless;
    // `legion run` decides what would reach the user per --approve, on workers as here.
    const decideHeadless = headless ? (requestId: string): void => {
      void hub!.decide(requestId, { decision: headless.approve === 'all' ? 'approved' : 'rejected', reason: `legion run --approve ${headless.approve}` });
    } : undefined;
    // The engine's client (and the Restate SDK behind it) loads only when an engine is configured.
    const feedToken = engineAt ? (await import('../engine/feed-token')).workspaceFeedToken(layout.legionDir) : undefined;
    if (feedToken && !feedToken.ok) throw new LegionError(feedToken.error);
    // A worker's statuses of the sessions the hub sent turns for go through the journal as the hub's do: each change once (hub-turn.ts).
    let onEngine: EngineTurns | undefined;
    const hub = engineAt && feedToken?.ok ? (await import('../engine/hub')).startEngineHub({
      ...engineAt, runId: run.id, onEvent: (event) => { if (!onEngine?.fromFeed(event)) bus.emit(event); }, feedToken: feedToken.token,
      ...(decideHeadless ? { onRemoteRequest: decideHeadless } : {}), ...(options.log ? { log: options.log } : {}),
    }) : undefined;
    if (hub) onEngine = engineTurns(hub, run.id, createProjectionFollower((sessionId) => layout.sessionFile(run.id, sessionId)));
    // AGENTS.md, hooks, agent files and skills (docs/conventions.md).
    // What the files say at start joins the start notices; later changes are notices on the bus.
    let started = false;
    const conventions = await composeConventions({
      config, configFiles, workspaceRoot, userDir: userConfigDir(env, env.HOME || homedir()), runId: run.id,
      transcriptPath: (sessionId) => layout.sessionFile(run.id, sessionId), env, ruleSet: rules.ruleSet,
      notice: (level, message, sessionId) => (started ? bus.emit({ type: 'notice', level, message, ...(sessionId ? { sessionId } : {}) }) : warnings.push(message)),
    });
    warnings.push(...conventions.warnings);
    conventions.instructions.current();
    conventions.attach(bus);
    started = true;
    let approvalCounter = 0;
    // Short ids people and agents can type (apr-1, apr-2…); the queue skips ids the run already holds.
    // Shell commands run in bubblewrap when they can (docs/sandbox.md); said once when they cannot.
    // Probed in the background (startBackground), or by the first turn, which waits for it.
    // What trusted hooks and MCP servers run is read-only in it (docs/sandbox.md#trusted-files).
    const trustedFiles = trustedRunFiles({
      workspaceRoot, mcpTrustFile: trustFilePath(env, env.HOME || homedir()), hooksTrustFile: hooksTrustFile(userConfigDir(env, env.HOME || homedir())),
    });
    const sandbox = composeSandbox({ config, ruleSet: rules.ruleSet, env, home: env.HOME || homedir(), workspaceRoot, trustedFiles });
    const fixedTools = createToolRegistry([...createBuiltinTools({ todoStore: createFileTodoStore(workspaceRoot, { scrub }), sandbox, shellEnv: config.sandbox.env, skills: conventions.skills, secretPath: secretPathMatcher(secretPatternsOf(rules.ruleSet)) }), ...(options.testHooks?.tools ?? [])]);
    const mcp = createMcpManager({
      servers: mcpSetup.servers, untrusted: mcpSetup.untrusted, verify: mcpSetup.verify, legionDir: layout.legionDir, clientVersion: VERSION,
      reservedNames: new Set([...fixedTools.list().map((t) => t.name), ...COLLECTIVE_TOOL_NAMES]), emit: (event) => bus.emit(event), secrets, canAskUser: !options.headless,
    });
    // The workspace's tools; the core adds the collective tools, built with what they use (runtime/turn-parts.ts).
    const tools = withDynamicTools(fixedTools, mcp.tools);
    const mcpTurnWait = createMcpTurnWait({ mcp, emit: (event) => bus.emit(event) });
    const approvals: ApprovalQueue = createApprovalQueue({
      layout, runId: run.id, bus, clock, ids: () => String(++approvalCounter), scrub, sandboxedTool: (name) => tools.get(name)?.sandboxed,
    });
    const registry = createRegistry({ store: participantStore, participants, toolNames: () => [...tools.list().map((t) => t.name), ...COLLECTIVE_TOOL_NAMES], guard: grantGuard, bus });
    const authz = await composeAuthz({ config, layout, runId: run.id, workspaceRoot, ruleSet: rules.ruleSet, registry, providers, bus, secrets, scrub, clock, trust, env });
    warnings.push(...authz.warnings);
    options.testHooks?.onParts?.({ approvals, registry, layout });
    const testProvider = options.testHooks?.provider;
    const triage = options.testHooks?.triage ?? authz.triage;
    // Opened in the background (startBackground); the first batch waits for it. Undo is made once the core exists.
    const parts = composeCheckpoints({ config, workspaceRoot, worktreesDir: layout.worktreesDir, runId: run.id, bus, clock });
    // What the first frame must not wait for (docs/performance.md): the sandbox probe, then the
    // checkpoint store. Started by the screen once drawn, or by the first turn (the core waits).
    let background: Promise<void> | undefined;
    const startBackground = (): Promise<void> => {
      background ??= (async () => {
        const said = await sandbox.start();
        if (said) bus.emit({ type: 'notice', level: said.level, message: said.message });
        await parts?.start();
      })();
      return background;
    };

    // Worktree isolation (docs/worktrees.md): a merge a killed process left half done is finished first.
    const worktrees = createWorktrees({ workspaceRoot, dir: layout.worktreesDir, runId: run.id, now: () => clock().toISOString(), leaveOut: secretPathMatcher(secretPatternsOf(rules.ruleSet)) });
    try {
      const { recovered } = await worktrees.start();
      for (const sessionId of recovered) warnings.push(`finished the merge of ${sessionId} that was interrupted when Legion stopped`);
    } catch (error) {
      warnings.push(`worktrees: ${messageOf(error)}`);
    }

    const core: Core = await createCore({
      config, workspaceRoot, layout, run: loadedRun, resumed, runStore, bus, registry, tools, worktrees,
      executeTool: worker ? worker.wrapExecute(executeTool) : executeTool,
      ...(worker ? { wrapTurn: worker.wrapTurn, delegateElsewhere: worker.delegate, durableStep: worker.step, approvalsAcross: worker.across, restartHandling: 'none' as const, ledger: false, runTotals: worker.runTotals } : {}),
      ...(hub && onEngine ? {
        restartHandling: 'none' as const,
        turnRunner: onEngine.run,
        elsewhere: approvalsOnWorkers(hub, (message) => bus.emit({ type: 'notice', level: 'warn', message })),
      } : {}),
      resolveProvider: (agent) => {
        if (testProvider) return { ok: true, provider: testProvider.provider, model: testProvider.model, maxTokens: 1000 };
        const got = providers.resolve(agent);
        return got.ok ? { ok: true, provider: got.provider, model: got.model, maxTokens: got.maxTokens } : got;
      },
      authorize: authz.authorize,
      addAllowance: authz.addAllowance,
      audit: authz.audit,
      ...(triage ? { triage } : {}),
      approvals,
      approvers: createApproverPolicy((id) => registry.get(id)),
      denials: createDenialTracker({ threshold: config.escalation.denialLoopThreshold }),
      ...(pricing.ok ? { priceOf: (usage) => pricing.pricing.costOf(usage.model, usage) } : {}),
      ...(pricing.ok ? { windowOf: (model: string) => pricing.pricing.windowOf(model) } : {}),
      clock,
      scrub: scrubber,
      ...(options.headless ? { headless: options.headless } : {}),
      startNotices: warnings.map((message) => ({ level: 'warn' as const, message })),
      promptExtras: conventions.promptExtras,
      afterCall: conventions.afterCall,
      ...(conventions.hooks ? { hooks: conventions.hooks } : {}),
      ...(parts ? { beforeBatch: parts.beforeBatch } : {}),
      // A message's turn also waits (once, bounded) for MCP servers still starting, so its request offers their tools.
      beforeFirstCall: async (signal) => {
        await startBackground();
        await mcpTurnWait(signal);
      },
      onShutdown: () => {
        hub?.close();
        sandbox.dispose();
        parts?.close();
        unregisterExit();
        lock.release();
      },
    });
    // Notifications and Telegram (docs/remote.md) follow the bus from here on; closed after the core's run-end.
    const remote = startRemoteParts({ config, core, env, headless: options.headless !== undefined, warn: (message) => warnings.push(message), ...(options.log ? { log: options.log } : {}) });
    // Workflows (docs/workflows.md): started through the core's commands, resumed after a restart.
    const workflows = composeWorkflows({
      core, bus, approvals, registry, headless: options.headless !== undefined, raiseBy: config.budgets.raiseBy, isolationDefault: config.isolation.default,
      appDir, workspaceRoot, runDir: layout.runDir(run.id), clock,
    });
    let resumedWorkflows: Promise<void> | undefined;
    const resumeWorkflows = (): Promise<void> => (resumedWorkflows ??= workflows.service.resume().then(({ issues }) => {
      for (const issue of issues) bus.emit({ type: 'notice', level: 'warn', message: issue });
    }));
    return {
      core, config, providerLabel: providers.label, demo: providers.demo, runId: run.id, resumed, warnings, mcp, trust,
      // Named services beside the core (core-api.ts ScreenSession): the history browser's reads, workflows, undo.
      history: createHistoryService(layout, core, keyArgumentOf), workflows: workflows.commands, workflowService: workflows.service, resumeWorkflows,
      ...(parts ? { undo: parts.undoFor({ isBusy: (sessionId) => BUSY.has(core.sessions().find((s) => s.id === sessionId)?.status ?? 'idle'), appendNote: core.appendNote }) } : {}),
      startBackground: () => {
        void startBackground();
        mcp.start();
        void resumeWorkflows();
      },
      settleBackground: startBackground,
      close: async (reason) => {
        workflows.service.stop();
        await core.shutdown(reason);
        await Promise.all([mcp.close(), remote.close(), worktrees.stop()]);
      },
    };
  } catch (error) {
    unregisterExit();
    lock.release();
    throw error;
  }
}
