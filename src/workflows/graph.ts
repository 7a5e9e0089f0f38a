import type { StepStatus } from './progress';

export interface GraphStep {
  readonly id: string;
  readonly after: readonly string[];
}

const FINISHED_BADLY: ReadonlySet<StepStatus> = new Set(['failed', 'cancelled', 'skipped']);

/**
 * The next moves of a workflow: pending steps whose `after` steps are all done can start;
 * pending steps with a failed, cancelled or skipped `after` step are skipped (with the step
 * that stopped them). Pure: the runner applies the result and asks again.
 */
export function nextMoves(steps: readonly GraphStep[], status: (id: string) => StepStatus): { ready: string[]; skip: { id: string; because: string }[] } {
  const ready: string[] = [];
  const skip: { id: string; because: string }[] = [];
  for (const step of steps) {
    if (status(step.id) !== 'pending') continue;
    const blocker = step.after.find((dep) => FINISHED_BADLY.has(status(dep)));
    if (blocker) skip.push({ id: step.id, because: blocker });
    else if (step.after.every((dep) => status(dep) === 'done')) ready.push(step.id);
  }
  return { ready, skip };
}
