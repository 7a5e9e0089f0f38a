import { test } from 'node:test';
import assert from 'node:assert/strict';
import { turnSteps } from '../../../src/engine/turn-steps';
import type { DurableJournal } from '../../../src/engine/durable-steps';
import type { TurnDeps } from '../../../src/runtime/agent-loop';
import type { EventFeed } from '../../../src/engine/event-feed';

/** A journal that records the names of the steps run in it. */
function journal(names: string[]): DurableJournal {
  return {
    attempt: 'a', attemptEnded: new AbortController().signal, cancelled: new AbortController().signal, invocationId: 'inv',
    run: async (name, action) => { names.push(name); return action(); },
    awakeable: () => ({ id: 'awk', promise: new Promise(() => undefined) }),
  };
}

const feed = { publishAwakeable: () => undefined } as unknown as EventFeed;
const answer = { text: 'ok', toolUses: [], inputErrors: new Map(), aborted: false };

test('a kept core journals each turn in its own journal, its model steps counted from 1', async () => {
  const steps = turnSteps(feed);
  const deps = steps.wrapTurn({ stream: async () => answer } as unknown as TurnDeps);
  const execute = steps.wrapExecute(async () => ({ content: 'done', isError: false }));
  const turn = { session: { id: 's1' }, controller: new AbortController() } as never;
  const first: string[] = [];
  const second: string[] = [];
  steps.begin('run', journal(first));
  await deps.stream(turn, {} as never, {} as never);
  await deps.stream(turn, {} as never, {} as never);
  await execute({ name: 'shell' } as never, {}, { toolUseId: 't1' } as never);
  steps.end();
  steps.begin('run', journal(second));
  await deps.stream(turn, {} as never, {} as never);
  steps.end();
  assert.deepEqual(first, ['model s1 1', 'model s1 2', 'tool-start t1', 'tool t1']);
  assert.deepEqual(second, ['model s1 1']);
  await assert.rejects(() => deps.stream(turn, {} as never, {} as never), /outside a turn/);
});
