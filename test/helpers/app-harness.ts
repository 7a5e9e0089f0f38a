import type { UndoService } from '../../src/checkpoints/undo-service';
import { mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { composeApp } from '../../src/cli/compose';
import type { CommandContext } from '../../src/cli/command';
import type { ApprovalQueue } from '../../src/authz/approvals';
import type { CollectiveRegistry } from '../../src/collective/registry';
import type { Agent } from '../../src/collective/participant';
import type { LegionConfig } from '../../src/config/schema';
import type { LegionEvent } from '../../src/events/types';
import { createFauxProvider, parseFauxScript } from '../../src/providers/faux';
import type { Provider } from '../../src/providers/types';
import type { Core } from '../../src/runtime/commands';
import type { HeadlessMode } from '../../src/runtime/env';
import type { Triage } from '../../src/runtime/ports';
import type { Layout } from '../../src/storage/layout';
import type { Tool } from '../../src/tools/types';
import type { WorkflowService } from '../../src/workflows/service';
import type { HistoryService, WorkflowCommands } from '../../src/runtime/core-api';
import { trustWorkspace } from './trust';

/** The repository root (holds config/). */
export const APP_DIR = join(import.meta.dirname, '..', '..');

/**
 * A test's authorization table, written as the workspace's `.legion/rules.yaml`: one rule per
 * tool (`test-<decision>-<tool>`), and `test-allow-rest` allowing everything else, so a test
 * sees only the asks and denies it names plus the shipped denies and asks (which no allow lifts).
 */
export type RuleTable = Readonly<Record<string, RuleDecision | { readonly decision: RuleDecision; readonly id?: string; readonly reason?: string; readonly approver?: string }>>;
type RuleDecision = 'allow' | 'ask' | 'deny';

export interface AppHarnessOptions {
  /** Workspace folder (created by the caller; reuse it to test a restart). */
  readonly dir: string;
  /** Leave the workspace untrusted (docs/workspace-trust.md); by default the harness trusts what the test wrote. */
  readonly untrusted?: boolean;
  /** Faux script YAML (written to the workspace, `LEGION_FAUX_SCRIPT`), or a provider instance. */
  readonly script?: string;
  readonly provider?: Provider;
  /** The model every call names (default `faux`, which config/models.yaml prices at $0). */
  readonly model?: string;
  /** Extra agents, written to `.legion/collective/participants/` (kind agent, provider/model default). */
  readonly agents?: readonly (Partial<Agent> & { id: string })[];
  /** `.legion/config.yaml` (JSON is YAML). */
  readonly config?: Record<string, unknown>;
  readonly rules?: RuleTable;
  /** `.legion/models.yaml`: prices (USD per million tokens) and windows per model. */
  readonly models?: Readonly<Record<string, { input: number; output: number; cacheRead?: number; cacheWrite?: number; contextWindow?: number }>>;
  readonly tools?: readonly Tool[];
  readonly triage?: Triage;
  readonly headless?: HeadlessMode;
  readonly newRun?: boolean;
  /** Extra environment variables of the start (e.g. the bot token `remote.telegram` names). */
  readonly env?: Readonly<Record<string, string>>;
  /** ComposeOptions.log: the operator's log (`legion serve` passes its own). */
  readonly log?: (line: string) => void;
}

export type Harness = AppHarness;

export interface AppHarness {
  readonly core: Core;
  readonly events: LegionEvent[];
  readonly layout: Layout;
  readonly registry: CollectiveRegistry;
  readonly approvals: ApprovalQueue;
  readonly config: LegionConfig;
  readonly runId: string;
  /** The history service beside the core (composeApp's `history`). */
  readonly history: HistoryService;
  /** The workflows beside the core as front ends drive them (composeApp's `workflows`), over `workflowService`. */
  readonly workflows: WorkflowCommands;
  /** The run's workflow service (docs/workflows.md) as composeApp wired it (`legion run --workflow` drives it). */
  readonly workflowService: WorkflowService;
  /** composeApp's `resumeWorkflows`: the workflows a previous start left running resume (the TUI calls it after its first frame, `legion run` before its work). */
  resumeWorkflows(): Promise<void>;
  /** composeApp's `startBackground` (MCP servers, the sandbox probe…), as a screen calls it once drawn. */
  startBackground(): void;
  /** composeApp's undo (docs/undo.md), as the TUI's checkpoint list uses it; absent when checkpoints are off. */
  readonly undo?: UndoService;
  /** The audit lines this start wrote (`.legion/audit/audit-<date>.jsonl`, read from disk; earlier starts' lines left out). */
  audit(): Record<string, unknown>[];
  /** The first event (already seen or coming) that matches; rejects after `timeoutMs`. */
  waitFor(match: (event: LegionEvent) => boolean, timeoutMs?: number): Promise<LegionEvent>;
  close(reason?: string): Promise<void>;
}

function rulesYaml(table: RuleTable): string {
  const rules: Record<string, unknown>[] = Object.entries(table).map(([tool, spec]) => {
    const { decision, id, reason, approver } = typeof spec === 'string' ? { decision: spec } as { decision: RuleDecision; id?: string; reason?: string; approver?: string } : spec;
    return { id: id ?? `test-${decision}-${tool.replace(/[^a-z0-9_-]/gi, '_')}`, decision, tool, reason: reason ?? `test rule: ${tool} → ${decision}`, ...(approver ? { approver } : {}) };
  });
  rules.push({ id: 'test-allow-rest', decision: 'allow', tool: '*', reason: 'test rule: everything else is allowed' });
  return JSON.stringify({ version: 1, rules }, null, 2);
}

/**
 * The real composition root (`composeApp`) over a temp workspace: config layers, rules,
 * prices, stores, ledger, approvals and audit all as a user's start builds them, from files
 * the test writes into the workspace. The user layer is a private home inside `.legion/`
 * (`.legion/test-home`), so nothing of the machine's own config leaks in. What no file can
 * express goes through `ComposeOptions.testHooks`: a provider instance, extra tools, triage.
 */
export async function startAppHarness(options: AppHarnessOptions): Promise<AppHarness> {
  const dir = realpathSync(options.dir);
  const legion = join(dir, '.legion');
  const home = join(legion, 'test-home');
  // Private modes, as Legion makes them (else the start reports tightening them).
  const dirMode = { recursive: true, mode: 0o700 } as const;
  const write = (path: string, text: string): void => writeFileSync(path, text, { mode: 0o600 });
  mkdirSync(legion, dirMode);
  mkdirSync(join(legion, 'collective', 'participants'), dirMode);
  mkdirSync(home, dirMode);
  if (options.config) write(join(legion, 'config.yaml'), JSON.stringify(options.config, null, 2));
  write(join(legion, 'rules.yaml'), rulesYaml(options.rules ?? {}));
  if (options.models) write(join(legion, 'models.yaml'), JSON.stringify({ version: 1, models: options.models }, null, 2));
  // A script file keeps the faux provider out of its demo mode (and the demo's agents out of the collective).
  const scriptFile = join(legion, 'test-script.yaml');
  write(scriptFile, options.script ?? 'version: 1\nreplies: []\n');
  for (const spec of options.agents ?? []) {
    const agent = { version: 1, kind: 'agent', name: spec.id, description: `${spec.id} (test agent)`, status: 'active', systemPrompt: `You are ${spec.id}.`, provider: 'default', model: 'default', tools: [], toolAuthorizations: {}, approvalAuthority: [], ...spec };
    write(join(legion, 'collective', 'participants', `${spec.id}.json`), JSON.stringify(agent, null, 2));
  }
  let provider = options.provider;
  if (!provider) {
    const parsed = parseFauxScript(options.script ?? 'version: 1\nreplies: []\n', 'test-script.yaml');
    if (!parsed.ok) throw new Error(parsed.error);
    provider = createFauxProvider({ script: parsed.script });
  }
  const auditDir = join(legion, 'audit');
  const auditLines = (): Record<string, unknown>[] => !existsSync(auditDir) ? [] : readdirSync(auditDir).sort()
    .flatMap((name) => readFileSync(join(auditDir, name), 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Record<string, unknown>));
  const auditBefore = auditLines().length;
  const events: LegionEvent[] = [];
  const watchers = new Set<(event: LegionEvent) => void>();
  let parts: { approvals: ApprovalQueue; registry: CollectiveRegistry; layout: Layout } | undefined;
  const context: CommandContext = {
    args: { command: 'start', positionals: [], flags: new Map(), global: { help: false, version: false, plain: false } },
    io: {
      stdout: () => {}, stderr: () => {}, cwd: dir, isTTY: false,
      env: { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), PATH: process.env.PATH, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: scriptFile, LEGION_TEST: '1', ...options.env },
    },
    appDir: APP_DIR,
    workspaceRoot: dir,
  };
  // The test wrote this `.legion/`: trusted unless the test is about an untrusted one (docs/workspace-trust.md).
  if (options.untrusted !== true) await trustWorkspace(dir, context.io.env);
  const app = await composeApp(context, {
    ...(options.newRun ? { newRun: true } : {}),
    ...(options.headless ? { headless: options.headless } : {}),
    ...(options.log ? { log: options.log } : {}),
    onBus: (bus) => bus.subscribeAll((event) => {
      events.push(event);
      for (const watch of [...watchers]) watch(event);
    }),
    testHooks: {
      provider: { provider, model: options.model ?? 'faux' },
      ...(options.tools ? { tools: options.tools } : {}),
      ...(options.triage ? { triage: options.triage } : {}),
      onParts: (p) => { parts = p; },
    },
  });
  const { approvals, registry, layout } = parts!;
  return {
    core: app.core, events, layout, registry, approvals, config: app.config, runId: app.runId,
    history: app.history, workflows: app.workflows, workflowService: app.workflowService, resumeWorkflows: () => app.resumeWorkflows(), startBackground: () => app.startBackground(),
    ...(app.undo ? { undo: app.undo } : {}),
    audit: () => auditLines().slice(auditBefore),
    waitFor(match, timeoutMs = 15_000) { // a safety bound only: every wait ends on its event, later on a loaded machine
      const seen = events.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          watchers.delete(watch);
          reject(new Error('waitFor: no matching event in time'));
        }, timeoutMs);
        const watch = (event: LegionEvent): void => {
          if (!match(event)) return;
          clearTimeout(timer);
          watchers.delete(watch);
          resolve(event);
        };
        watchers.add(watch);
      });
    },
    close: (reason = 'test done') => app.close(reason),
  };
}
