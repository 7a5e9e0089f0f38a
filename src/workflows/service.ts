import { USER_ID } from '../collective/participant';
import { sessionIdOf } from '../session/ids';
import { findWorkflow, resolveInputs, type WorkflowEntry } from './load';
import type { ProgressStore, WorkflowProgress } from './progress';
import type { ResolvedStep } from './schema';
import { startWorkflowRun, type WorkflowRun, type WorkflowRunDeps } from './runner';

export interface WorkflowServiceDeps extends Omit<WorkflowRunDeps, 'save'> {
  readonly store: ProgressStore;
  /** The workflows that can run now (files re-read, agents checked against the collective). */
  load(): Promise<WorkflowEntry[]>;
}

export type WorkflowStart = { ok: true; run: WorkflowRun } | { ok: false; error: string };

/** Workflows of one run: start, cancel, resume after a restart, stop with Legion (docs/workflows.md). */
export interface WorkflowService {
  list(): Promise<WorkflowEntry[]>;
  start(name: string, input: string, inputs?: Readonly<Record<string, string>>): Promise<WorkflowStart>;
  /** Resume every workflow a previous process left running; returns them and unreadable files. */
  resume(): Promise<{ runs: WorkflowRun[]; issues: string[] }>;
  /** Cancel a running workflow; false when there is none with that id. */
  cancel(workflowId: string): boolean;
  /** Workflow runs of this process that have not ended. */
  active(): WorkflowRun[];
  /** Legion shuts down: every running workflow stops where it is, to resume at the next start. */
  stop(): void;
}

/** The progress record of a new workflow run, before anything ran. */
function newProgress(workflowId: string, name: string, file: string, input: string, inputs: Record<string, string>, steps: readonly ResolvedStep[], now: string, budgetUsd?: number): WorkflowProgress & { plan: ResolvedStep[] } {
  return {
    version: 1, workflowId, name, file, status: 'running', input, inputs, budgetRaises: 0, spentUsd: 0, startedAt: now,
    ...(budgetUsd !== undefined ? { budgetUsd } : {}),
    steps: Object.fromEntries(steps.map((s) => [s.id, { status: 'pending' as const, sessionId: sessionIdOf({ initiatorId: USER_ID, responderId: s.agent, name: s.session }), costUsd: 0 }])),
    plan: steps.map((s) => ({ ...s, after: [...s.after] })),
  };
}

export function createWorkflowService(deps: WorkflowServiceDeps): WorkflowService {
  const runs = new Map<string, WorkflowRun>();
  let stopped = false;
  const launch = (progress: WorkflowProgress, resumed: boolean): WorkflowRun => {
    const run = startWorkflowRun(progress, progress.plan, { ...deps, save: (p) => deps.store.save(p) }, { resumed });
    runs.set(run.workflowId, run);
    void run.done.then(() => runs.delete(run.workflowId));
    return run;
  };
  return {
    list: () => deps.load(),
    async start(name, input, given = {}) {
      if (stopped) return { ok: false, error: 'Legion is stopping' };
      const found = findWorkflow(await deps.load(), name);
      if (!found.ok) return found;
      const { workflow } = found;
      // A second copy would talk in the same sessions, its turns queued behind the first's.
      const twin = [...runs.values()].find((r) => r.name === name);
      if (twin) return { ok: false, error: `workflow ${name} is already running (${twin.workflowId}); wait for it or cancel it` };
      const inputs = resolveInputs(workflow, given);
      if (!inputs.ok) return inputs;
      const usesInput = workflow.steps.some((s) => /\{\{\s*input\s*\}\}/.test(s.prompt));
      if (usesInput && !input.trim()) return { ok: false, error: `workflow ${name} needs an input (its prompts use {{input}})` };
      const taken = new Set((await deps.store.list()).progress.map((p) => p.workflowId));
      let n = 1;
      while (taken.has(`${name}-${n}`) || runs.has(`${name}-${n}`)) n++;
      const progress = newProgress(`${name}-${n}`, name, workflow.file, input, inputs.inputs, workflow.steps, deps.now(), workflow.budgetUsd);
      return { ok: true, run: launch(progress, false) };
    },
    async resume() {
      const { progress, issues } = await deps.store.list();
      const resumed = progress.filter((p) => p.status === 'running' && !runs.has(p.workflowId)).map((p) => launch(p, true));
      return { runs: resumed, issues };
    },
    cancel(workflowId) {
      const run = runs.get(workflowId);
      return run ? run.cancel() : false;
    },
    active: () => [...runs.values()],
    stop() {
      stopped = true;
      for (const run of runs.values()) run.halt();
    },
  };
}

