import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as restate from '@restatedev/restate-sdk';
import { startStep, type StepContext } from '../../../src/engine/step-start';

/** A context like the SDK's: `run` keeps the step's closure for the test to run (the SDK's turn) or never (a replayed step). */
function fakeContext(processing: boolean | undefined) {
  const closures: (() => Promise<unknown>)[] = [];
  const ctx: StepContext = {
    ...(processing === undefined ? {} : { isProcessing: () => processing }),
    run: ((_name: string, closure: () => Promise<unknown>) => {
      closures.push(closure);
      return {} as restate.RestatePromise<unknown>;
    }) as StepContext['run'],
  };
  return { ctx, closures };
}

test('startStep: a step issued while the VM processes starts its action at once; the SDK later takes the same promise, the action runs once', async () => {
  const { ctx, closures } = fakeContext(true);
  let runs = 0;
  startStep(ctx, 'model s 1', async () => ++runs);
  assert.equal(runs, 1, 'the action waited for the SDK');
  assert.equal(await closures[0]!(), 1);
  assert.equal(runs, 1, 'the action ran twice');
});

test('startStep: while the VM replays the journal (or the context cannot say) the action waits for the SDK, and a replayed step never runs it', async () => {
  for (const processing of [false, undefined]) {
    const { ctx, closures } = fakeContext(processing);
    let runs = 0;
    startStep(ctx, 'model s 1', async () => ++runs);
    await new Promise((r) => setImmediate(r));
    assert.equal(runs, 0, `the action of a step that may be in the journal started (isProcessing: ${processing})`);
    assert.equal(closures.length, 1);
    assert.equal(await closures[0]!(), 1);
  }
});

test('startStep: an action started early that fails fails the step when the SDK takes it, and is no unhandled rejection meanwhile', async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const { ctx, closures } = fakeContext(true);
    startStep(ctx, 'tool t1', async () => { throw new Error('tool broke'); });
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(unhandled, []);
    await assert.rejects(closures[0]!(), /tool broke/);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});
