import { resolve } from 'node:path';
import type { CallRun } from './call-state';

/**
 * Which calls of one batch may run at the same time. Two calls conflict when they share
 * a key; conflicting calls run one after the other in the model's order, the rest in
 * parallel:
 * - every workspace path a call names (its tool's `pathFields`) is a key, so a write and a
 *   read of the same file never race;
 * - all `shell` calls share one key (a command may touch anything, and two shells
 *   interleaving output on the same files is never what the model meant);
 * - `todo_write` calls share one key (last write wins in order).
 */
export function conflictKeys(workspaceRoot: string, call: CallRun): string[] {
  const tool = call.tool;
  const keys: string[] = [];
  if (tool.name === 'shell') keys.push('shell');
  if (tool.name === 'todo_write') keys.push('todo');
  const input = call.input as Record<string, unknown> | undefined;
  for (const field of tool.pathFields ?? []) {
    const value = input?.[field];
    if (typeof value === 'string') keys.push(`path:${resolve(workspaceRoot, value)}`);
  }
  return keys;
}

/** Resolves when `work` settles or `signal` aborts, whichever is first. */
export function untilAbort(work: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((done) => {
    const onAbort = (): void => done();
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      () => { signal.removeEventListener('abort', onAbort); done(); },
      () => { signal.removeEventListener('abort', onAbort); done(); },
    );
  });
}

/**
 * Run `calls` with `run` under the conflict rule above. Returns when every call is done,
 * or at once when `signal` aborts (running tools see the abort through their context and
 * stop on their own; their late results are ignored by the caller).
 */
export async function runScheduled(workspaceRoot: string, calls: readonly CallRun[], signal: AbortSignal, run: (call: CallRun) => Promise<void>): Promise<void> {
  if (calls.length === 1) return untilAbort(run(calls[0]!), signal);
  const tails = new Map<string, Promise<void>>();
  const all = calls.map((call) => {
    const keys = conflictKeys(workspaceRoot, call);
    const before: Promise<void>[] = [];
    for (const key of keys) {
      const tail = tails.get(key);
      if (tail) before.push(tail);
    }
    const start = before.length === 0 ? Promise.resolve() : Promise.all(before).then(() => undefined);
    const done = start.then(() => (signal.aborted ? undefined : run(call)));
    for (const key of keys) tails.set(key, done);
    return done;
  });
  return untilAbort(Promise.all(all), signal);
}
