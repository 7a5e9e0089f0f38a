import { join } from 'node:path';
import type { ApprovalQueue } from '../authz/approvals';
import type { CollectiveRegistry } from '../collective/registry';
import type { EventBus } from '../events/bus';
import type { Core } from '../runtime/commands';
import type { WorkflowCommands } from '../runtime/core-api';
import type { WorkflowService } from '../workflows/service';

export interface ComposeWorkflowsDeps {
  readonly core: Core;
  readonly bus: EventBus;
  readonly approvals: ApprovalQueue;
  readonly registry: Pick<CollectiveRegistry, 'list'>;
  readonly headless: boolean;
  /** `budgets.raiseBy`. */
  readonly raiseBy: number;
  /** `isolation.default` (docs/worktrees.md). */
  readonly isolationDefault: 'worktree' | 'none';
  readonly appDir: string;
  readonly workspaceRoot: string;
  /** `runs/<runId>/`. */
  readonly runDir: string;
  readonly clock?: () => Date;
}

const BUSY = new Set(['thinking', 'running-tool', 'waiting-approval']);
/** Tools that change files: a parallel step whose agent holds one is isolated by default (docs/worktrees.md#workflow-steps). */
const WRITING_TOOLS = new Set(['file_write', 'file_edit', 'file_delete', 'shell']);

/**
 * The workflows of a run over the core's commands (docs/workflows.md): the service `legion run`
 * drives, and the front ends' `WorkflowCommands` over it. The workflow code (loader, schemas, runner, progress files) loads at the
 * first use — a list, a start, the resume after the first frame — not with the app.
 */
export function composeWorkflows(deps: ComposeWorkflowsDeps): { service: WorkflowService; commands: WorkflowCommands } {
  let loaded: WorkflowService | undefined;
  let loading: Promise<WorkflowService> | undefined;
  const real = (): Promise<WorkflowService> => (loading ??= createService(deps).then((made) => (loaded = made)));
  // Nothing can run before the code is loaded: a workflow starts or resumes only through it.
  const service: WorkflowService = {
    list: async () => (await real()).list(),
    start: async (name, input, inputs) => (await real()).start(name, input, inputs),
    resume: async () => (await real()).resume(),
    cancel: (workflowId) => loaded?.cancel(workflowId) ?? false,
    active: () => loaded?.active() ?? [],
    stop: () => loaded?.stop(),
  };
  return {
    service,
    commands: {
      list: async () => {
        const [entries, { workflowInfo }] = await Promise.all([service.list(), import('../workflows/info')]);
        return entries.map(workflowInfo);
      },
      start: async (name, input, inputs) => {
        const started = await service.start(name, input, inputs);
        return started.ok ? { ok: true, workflowId: started.run.workflowId } : started;
      },
      cancel: (workflowId) => service.cancel(workflowId),
    },
  };
}

async function createService(deps: ComposeWorkflowsDeps): Promise<WorkflowService> {
  const [{ createRequestBudget }, { loadWorkflows, workflowDirs }, { createProgressStore }, { createWorkflowService }] = await Promise.all([
    import('../workflows/budget'), import('../workflows/load'), import('../workflows/progress'), import('../workflows/service'),
  ]);
  const { core, bus } = deps;
  const clock = deps.clock ?? (() => new Date());
  const agents = (): string[] => deps.registry.list().filter((p) => p.kind === 'agent' && p.status === 'active').map((p) => p.id);
  return createWorkflowService({
    port: {
      openSession: (agent, name) => core.openSession(agent, name),
      send: (agent, text, name) => core.send(agent, text, name),
      idle: (sessionId) => core.idle(sessionId),
      outcome: (sessionId) => core.lastOutcome(sessionId),
      cancel: (sessionId) => core.cancel(sessionId),
      history: (sessionId) => core.history(sessionId),
      isBusy: (sessionId) => BUSY.has(core.sessions().find((s) => s.id === sessionId)?.status ?? 'idle'),
      ...(core.prepareIsolation ? {
        isolation: {
          configDefault: deps.isolationDefault,
          writes: (agent: string) => {
            const p = deps.registry.list().find((x) => x.id === agent);
            return p?.kind === 'agent' && p.tools.some((t) => WRITING_TOOLS.has(t));
          },
          prepare: core.prepareIsolation.bind(core),
        },
      } : {}),
    },
    emit: (event) => bus.emit(event),
    onUsage: (listener) => bus.subscribe('usage', listener),
    store: createProgressStore(join(deps.runDir, 'workflows')),
    requestBudget: createRequestBudget({ approvals: deps.approvals, headless: deps.headless }),
    raiseBy: deps.raiseBy,
    now: () => clock().toISOString(),
    load: () => loadWorkflows(workflowDirs(deps.appDir, deps.workspaceRoot), { agents: agents() }),
  });
}
