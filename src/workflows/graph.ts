import type { StepStatus } from './progress';
import { ancestorsOf } from './validate';

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

/**
 * Whether a step works in a git worktree (docs/worktrees.md#workflow-steps): what its file says;
 * else `worktree` when its agent writes (holds a tool that changes files) and the step may run at
 * the same time as another (neither comes after the other); else the config's `isolation.default`.
 * `defaulted`: not written in the file (a workspace that cannot isolate then runs it without).
 */
export function isolationOf(
  steps: readonly (GraphStep & { readonly isolation?: 'worktree' | 'none' })[],
  id: string,
  writes: boolean,
  configDefault: 'worktree' | 'none',
): { mode: 'worktree' | 'none'; defaulted: boolean } {
  const step = steps.find((s) => s.id === id);
  if (step?.isolation) return { mode: step.isolation, defaulted: false };
  const ancestors = ancestorsOf(steps);
  const ordered = (a: string, b: string): boolean => ancestors.get(a)!.has(b) || ancestors.get(b)!.has(a);
  const parallel = steps.some((other) => other.id !== id && !ordered(id, other.id));
  return { mode: writes && parallel ? 'worktree' : configDefault, defaulted: true };
}
