import { LegionError } from '../../errors';
import type { AppSession } from '../compose';
import type { CliIo } from '../io';
import type { WorkflowProgress } from '../../workflows/progress';
import { reportWorkflowEnd, type WorkflowRunExit } from '../workflow-end';

export type { WorkflowRunExit } from '../workflow-end';

/** `--input k=v` (repeatable) as a record; a malformed or repeated one is a usage error (exit 2). */
export function parseInputFlags(values: readonly string[]): Record<string, string> {
  const inputs: Record<string, string> = {};
  for (const value of values) {
    const eq = value.indexOf('=');
    if (eq <= 0) throw new LegionError(`--input takes name=value, not "${value}"`, 2);
    const name = value.slice(0, eq);
    if (name in inputs) throw new LegionError(`--input ${name} is given twice`, 2);
    inputs[name] = value.slice(eq + 1);
  }
  return inputs;
}

/**
 * `legion run --workflow <name>` (docs/workflows.md, "CLI"): start the workflow, wait for it,
 * print its last step's output (nothing with --json: the events are the output). Steps that
 * failed or were skipped are named on stderr. `onCancel` receives the cancel for Ctrl+C.
 */
export async function runWorkflow(
  app: Pick<AppSession, 'workflowService'>,
  options: { name: string; input: string; inputs: Record<string, string>; json: boolean; exit: WorkflowRunExit; clean(text: string): string },
  io: Pick<CliIo, 'stdout' | 'stderr'>,
  onCancel: (cancel: () => void) => void,
): Promise<number> {
  const started = await app.workflowService.start(options.name, options.input, options.inputs);
  if (!started.ok) throw new LegionError(options.clean(started.error));
  onCancel(() => started.run.cancel());
  const result: WorkflowProgress = await started.run.done;
  const last = result.plan[result.plan.length - 1]!;
  return reportWorkflowEnd(io, {
    name: result.name,
    // Still `running`: Legion was shut down under it (halted; the next start resumes it).
    status: result.status === 'running' ? 'cancelled' : result.status,
    ...(result.error !== undefined ? { error: result.error } : {}),
    steps: Object.entries(result.steps).map(([id, step]) => ({ id, status: step.status, ...(step.error !== undefined ? { error: step.error } : {}) })),
    output: result.steps[last.id]?.output ?? '',
  }, options);
}
