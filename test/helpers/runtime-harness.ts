// Kept for the remote and workflow tests written before the move to composeApp (test/helpers/app-harness.ts); new tests use startAppHarness. Move these and delete this file.
import { hostname } from 'node:os';
import { join } from 'node:path';
import { realpathSync } from 'node:fs';
import { configSchema, type LegionConfig } from '../../src/config/schema';
import { createBus } from '../../src/events/bus';
import type { LegionEvent } from '../../src/events/types';
import { layoutFor, type Layout } from '../../src/storage/layout';
import { initWorkspace } from '../../src/collective/init';
import { createParticipantStore } from '../../src/collective/store';
import { agentSchema, type Agent } from '../../src/collective/participant';
import { createRegistry, type CollectiveRegistry } from '../../src/collective/registry';
import { createCollectiveTools } from '../../src/collective/tools';
import { createRunStore } from '../../src/session/run-store';
import { acquireRunLock } from '../../src/session/lock';
import { createApprovalQueue, readPendingApprovals, type ApprovalQueue } from '../../src/authz/approvals';
import { grantGuard } from '../../src/authz/grant-guard';
import { createApproverPolicy } from '../../src/authz/approver';
import { createDenialTracker } from '../../src/authz/denial-tracker';
import { createFauxProvider, parseFauxScript } from '../../src/providers/faux';
import type { Provider } from '../../src/providers/types';
import { createBuiltinTools, createToolRegistry } from '../../src/tools/registry';
import { createMemoryTodoStore } from '../../src/tools/todo-store';
import { executeTool } from '../../src/tools/execute-tool';
import type { Tool } from '../../src/tools/types';
import { createCore } from '../../src/runtime/core';
import type { Core } from '../../src/runtime/commands';
import type { HeadlessMode } from '../../src/runtime/env';
import type { AuditRecord, Authorize, PriceOf, Triage } from '../../src/runtime/ports';
import { lastLedgerSeq } from '../../src/runtime/ledger-seq';
import { keepOpenFor } from '../../src/runtime/resume-plan';

/** The repository root (holds config/). */
export const APP_DIR = join(import.meta.dirname, '..', '..');

export interface HarnessOptions {
  /** Workspace folder (created by the caller; reuse it to test a restart). */
  readonly dir: string;
  /** Faux script YAML, or a ready provider. */
  readonly script?: string;
  readonly provider?: Provider;
  /** Extra agents (defaults: kind agent, provider/model default). */
  readonly agents?: readonly (Partial<Agent> & { id: string })[];
  readonly config?: Record<string, unknown>;
  readonly tools?: readonly Tool[];
  readonly authorize?: Authorize;
  readonly triage?: Triage;
  readonly headless?: HeadlessMode;
  readonly newRun?: boolean;
  /** Prices of model calls (default: none known). */
  readonly priceOf?: PriceOf;
}

export interface Harness {
  readonly core: Core;
  readonly events: LegionEvent[];
  readonly layout: Layout;
  readonly registry: CollectiveRegistry;
  readonly approvals: ApprovalQueue;
  readonly audit: AuditRecord[];
  readonly config: LegionConfig;
  /** The first event (already seen or coming) that matches; rejects after `timeoutMs`. */
  waitFor(match: (event: LegionEvent) => boolean, timeoutMs?: number): Promise<LegionEvent>;
  close(reason?: string): Promise<void>;
}

/** A core over a real temp workspace: real stores, approval queue, tools; the faux provider. */
export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const dir = realpathSync(options.dir);
  const layout = layoutFor(dir);
  await initWorkspace({ appDir: APP_DIR, workspaceRoot: dir });
  const store = createParticipantStore(layout);
  for (const spec of options.agents ?? []) {
    await store.save(agentSchema.parse({ kind: 'agent', name: spec.id, systemPrompt: `You are ${spec.id}.`, ...spec }));
  }
  const config = configSchema.parse(options.config ?? {});
  const clock = (): Date => new Date();
  let counter = 0;
  const runStore = createRunStore(layout, clock, () => (++counter).toString(36));
  const latest = options.newRun ? null : await runStore.latest();
  const run = latest ?? (await runStore.create(clock()));
  const locked = acquireRunLock(layout, run.id, { pid: process.pid, hostname: hostname(), now: clock() });
  if (!locked.ok) throw new Error(locked.error);
  const participants = await store.loadAll();
  const pending = await readPendingApprovals(layout.approvals(run.id));
  const isActiveAgent = (id: string): boolean => participants.some((p) => p.id === id && p.kind === 'agent' && p.status === 'active');
  const loaded = await runStore.load(run, clock(), { keepOpen: keepOpenFor(pending, isActiveAgent) });
  const bus = createBus({ runId: run.id, startSeq: await lastLedgerSeq(layout.events(run.id)) });
  const events: LegionEvent[] = [];
  const watchers = new Set<(event: LegionEvent) => void>();
  bus.subscribeAll((event) => {
    events.push(event);
    for (const watch of [...watchers]) watch(event);
  });
  let ids = 0;
  const approvals = createApprovalQueue({ layout, runId: run.id, bus, clock, ids: () => String(++ids) });
  const tools = createToolRegistry([...createBuiltinTools({ todoStore: createMemoryTodoStore() }), ...createCollectiveTools(), ...(options.tools ?? [])]);
  const registry = createRegistry({ store, participants: await store.loadAll(), toolNames: () => tools.list().map((t) => t.name), guard: grantGuard, bus });
  let provider = options.provider;
  if (!provider) {
    const parsed = parseFauxScript(options.script ?? 'version: 1\nreplies: []\n', 'test-script.yaml');
    if (!parsed.ok) throw new Error(parsed.error);
    provider = createFauxProvider({ script: parsed.script });
  }
  const audit: AuditRecord[] = [];
  const core = await createCore({
    config, workspaceRoot: dir, layout, run: loaded, resumed: latest !== null, runStore, bus, registry, tools, executeTool,
    resolveProvider: () => ({ ok: true, provider: provider!, model: 'faux', maxTokens: 1000 }),
    ...(options.authorize ? { authorize: options.authorize } : {}),
    ...(options.triage ? { triage: options.triage } : {}),
    approvals,
    approvers: createApproverPolicy((id) => registry.get(id)),
    audit: (entry) => void audit.push(entry),
    denials: createDenialTracker({ threshold: config.escalation.denialLoopThreshold }),
    clock,
    ...(options.headless ? { headless: options.headless } : {}),
    ...(options.priceOf ? { priceOf: options.priceOf } : {}),
    onShutdown: () => locked.lock.release(),
  });
  return {
    core, events, layout, registry, approvals, audit, config,
    waitFor(match, timeoutMs = 4000) {
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
    close: (reason = 'test done') => core.shutdown(reason),
  };
}

/** Simple allow/ask/deny by tool name for tests (everything else allowed). */
export function authorizeBy(table: Readonly<Record<string, 'allow' | 'ask' | 'deny'>>): Authorize {
  return (call) => {
    const decision = table[call.toolName] ?? 'allow';
    return { decision, ruleId: `test-${decision}`, reason: `test rule: ${call.toolName} → ${decision}`, source: 'rule' };
  };
}
