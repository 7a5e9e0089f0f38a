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
  AddAllowance, ApproverPolicy, AuditSink, Authorize, DenialTracker, ExecuteTool, PriceOf, ResolveProvider, ToolCatalog, Triage,
} from './ports';
import type { HeadlessMode, RuntimeEnv } from './env';
import { Hub } from './hub';
import { allowGranted, approverPolicy, plainExecuteTool } from './defaults';
import { communicate } from './delegation';
import { resolveByAgent } from './agent-approval';
import { createCommands, type Core } from './commands';
import { answerDropped, auditExpired, planResumes, startResumes, type ResumePlan } from './resume';
import { createUsageBook, readRunUsage } from './usage-book';

export interface CoreOptions {
  readonly config: LegionConfig;
  readonly workspaceRoot: string;
  readonly layout: Layout;
  /**
   * The run, loaded (histories repaired) by the run store; the caller holds its lock. Sessions
   * it kept open (`keepOpen: keepOpenFor(readPendingApprovals(…), …)`) are resumed or answered here.
   */
  readonly run: LoadedRun;
  readonly resumed: boolean;
  /** Saves run.json (title, updatedAt); optional in tests. */
  readonly runStore?: Pick<RunStore, 'save'>;
  readonly bus: EventBus;
  readonly registry: CollectiveRegistry;
  readonly tools: ToolCatalog;
  readonly executeTool?: ExecuteTool;
  readonly resolveProvider: ResolveProvider;
  readonly authorize?: Authorize;
  readonly approvals: ApprovalQueue;
  readonly approvers?: ApproverPolicy;
  readonly audit?: AuditSink;
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
}

/**
 * Build the core of one run (the `LegionCore` front ends drive). Emits `run-start`,
 * reports what loading found, resumes the turns a previous process left waiting on approvals
 * (`run.kept`: the user's lanes, and the call chains below them, see resume.ts; their
 * requests are re-offered under the same ids), and expires every other request left pending
 * (its turn died with that process; the history answers the call "interrupted"). Expiries
 * are audited.
 */
export async function createCore(options: CoreOptions): Promise<Core> {
  const clock = options.clock ?? (() => new Date());
  const env: RuntimeEnv = {
    config: options.config,
    workspaceRoot: options.workspaceRoot,
    runId: options.run.run.id,
    bus: options.bus,
    sessions: options.run.sessions,
    registry: options.registry,
    tools: options.tools,
    executeTool: options.executeTool ?? plainExecuteTool,
    resolveProvider: options.resolveProvider,
    authorize: options.authorize ?? allowGranted,
    approvals: options.approvals,
    approvers: options.approvers ?? approverPolicy((id) => options.registry.get(id)),
    audit: options.audit ?? (() => undefined),
    denials: options.denials,
    triage: options.triage,
    priceOf: options.priceOf,
    addAllowance: options.addAllowance,
    clock,
    headless: options.headless,
    scrub: options.scrub ?? NO_SECRETS,
  };
  const hub = new Hub(env);
  const services: CollectiveServices = {
    registry: options.registry,
    tools: options.tools,
    communicate: (context, input) => communicate(hub, context, input),
    resolveApproval: (context, input) => resolveByAgent(hub, context, input),
  };
  hub.services = services;

  let ledger: Ledger | undefined;
  if (options.ledger !== false) ledger = attachLedger(options.bus, options.layout.events(env.runId));
  // Token and cost totals continue across restarts (runs/<runId>/usage.json).
  const usageFile = options.layout.usage(env.runId);
  const usageRead = await readRunUsage(usageFile);
  const usage = createUsageBook({ file: usageFile, seed: usageRead.usage, onError: (message) => hub.notice('warn', message) });
  options.bus.subscribe('usage', (event) => usage.add(event));
  options.bus.emit({ type: 'run-start', resumed: options.resumed });
  for (const notice of options.startNotices ?? []) hub.notice(notice.level, notice.message);
  if (usageRead.issue) hub.notice('warn', usageRead.issue);
  for (const issue of [...options.run.issues, ...(ledger?.issues ?? [])]) hub.notice('warn', issue.message);
  for (const repair of options.run.repairs) {
    hub.notice('info', `${repair.sessionId}: answered ${repair.answered.length} tool call(s) left open when Legion stopped ("interrupted")`, repair.sessionId);
  }
  let plan: ResumePlan = { resumes: [], dropped: [...(options.run.kept ?? [])], requestIds: new Set() };
  try {
    const loaded = await options.approvals.load();
    for (const issue of loaded.issues) hub.notice('warn', issue);
    plan = planResumes(hub, options.run.kept ?? []);
    const expired = options.approvals.expire(loaded.pending.filter((r) => !plan.requestIds.has(r.requestId)).map((r) => r.requestId));
    for (const requestId of expired) auditExpired(hub, requestId);
    if (expired.length > 0) {
      hub.notice('info', `${expired.length} approval request(s) from before the restart expired: their turn ended when Legion stopped; the agent can ask again`);
    }
  } catch (error) {
    hub.notice('error', `could not read the approval requests of run ${env.runId}: ${messageOf(error)}`);
  }
  answerDropped(hub, plan.dropped);

  const core = createCommands(hub, {
    runStore: options.runStore,
    run: options.run.run,
    usage: () => usage.totals(),
    async close() {
      await usage.close();
      ledger?.close();
      options.onShutdown?.();
    },
  });
  startResumes(hub, plan.resumes);
  return core;
}
