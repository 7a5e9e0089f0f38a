import type * as restate from '@restatedev/restate-sdk';

/** The SDK's context as this module uses it: `run`, and the VM's state where the SDK has it. */
export type StepContext = Pick<restate.Context, 'run'> & { readonly isProcessing?: () => boolean };

/**
 * `ctx.run(name, action)` with the action started at once when the step cannot be in the
 * journal (docs/engine.md#a-step-starts-at-once). The SDK runs a new step's action only after it
 * has written the step's command to the engine and come round its event loop again (0.5–0.8 ms
 * a step here, under load); a model call or a tool need not wait for that. The step is new when
 * the SDK's VM is processing before it is issued: the VM replays the journal's commands first and
 * turns to processing once the last is matched, so every command issued after is new — its
 * action runs in this attempt either way, now or when the SDK would. `isProcessing` is the
 * context's own (not in the SDK's types): without it, or while the VM replays or has failed, the
 * action waits for the SDK as before. The action starts right after the step's command is issued
 * (what it issues follows that command, as before) and runs once. The result is journaled as
 * before: when the SDK runs the step it takes the action's promise; an attempt that ends first leaves the action's result
 * unjournaled, as it would a step cut mid-run.
 */
export function startStep<T>(ctx: StepContext, name: string, action: () => Promise<T>): restate.RestatePromise<T> {
  const fresh = ctx.isProcessing?.() === true;
  let started: Promise<T> | undefined;
  const start = (): Promise<T> => (started ??= action());
  // The step's command first, then its action: whatever the action issues follows the command, as when the SDK runs it.
  const step = ctx.run(name, start);
  if (fresh) start().catch(() => undefined); // seen by the SDK when it runs the step
  return step;
}
