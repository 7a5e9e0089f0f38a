import type { CliIo } from './io';
import type { WorkflowEnd, WorkflowStepEnd } from '../events/types';

/** Exit codes of `legion run --workflow` (docs/workflows.md#cli). */
export interface WorkflowRunExit {
  readonly ok: number;
  readonly failure: number;
  readonly turnFailed: number;
  readonly budget: number;
  readonly interrupted: number;
}

/** How a workflow ended, as a local run (its progress) and an attached one (its events) both know it. */
export interface WorkflowEndReport {
  readonly name: string;
  readonly status: WorkflowEnd;
  readonly error?: string;
  /** Every step's end, in order. */
  readonly steps: readonly { readonly id: string; readonly status: WorkflowStepEnd | 'pending' | 'running'; readonly error?: string }[];
  /** The last step's recorded output (file order); printed when the workflow is done. */
  readonly output: string;
}

/**
 * The end of `legion run --workflow`, local or attached (docs/workflows.md#cli): failed and
 * cancelled steps on stderr, then the skipped ones; the output on stdout (not with --json: the
 * events are the output); the exit code.
 */
export function reportWorkflowEnd(
  io: Pick<CliIo, 'stdout' | 'stderr'>,
  end: WorkflowEndReport,
  options: { readonly json: boolean; readonly exit: WorkflowRunExit; clean(text: string): string },
): number {
  const { exit, clean } = options;
  for (const step of end.steps) {
    if (step.status === 'failed' || step.status === 'cancelled') io.stderr(`legion: workflow ${end.name}: step ${step.id} ${step.status}: ${clean(step.error ?? '')}\n`);
  }
  const skipped = end.steps.filter((s) => s.status === 'skipped').map((s) => s.id);
  if (skipped.length > 0 && end.status !== 'cancelled') io.stderr(`legion: workflow ${end.name}: not run: ${skipped.join(', ')}\n`);
  if (end.status === 'cancelled') {
    io.stderr('legion: interrupted\n');
    return exit.interrupted;
  }
  if (end.status === 'budget') {
    io.stderr(`legion: ${clean(end.error ?? 'budget reached')}\n`);
    return exit.budget;
  }
  if (end.status === 'failed') return exit.turnFailed;
  const { output } = end;
  if (!options.json) io.stdout(clean(output.endsWith('\n') || output === '' ? output : `${output}\n`));
  return exit.ok;
}
