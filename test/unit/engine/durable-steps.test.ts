import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CUT_BY_WORKER, journaledExecute, journaledStream, type DurableJournal } from '../../../src/engine/durable-steps';
import type { StreamResult } from '../../../src/runtime/stream';
import type { ExecuteTool } from '../../../src/runtime/ports';
import type { Turn } from '../../../src/runtime/turn';
import type { Tool, ToolContext } from '../../../src/tools/types';

/** A journal like the engine's: steps recorded by name once they finish; `attempt` changes per replay. */
function fakeJournal(records: Map<string, unknown>, attempt: string, names: string[] = []): DurableJournal {
  return {
    attempt,
    attemptEnded: new AbortController().signal,
    cancelled: new AbortController().signal,
    invocationId: 'inv_test',
    awakeable: () => { throw new Error('no awakeables here'); },
    awakeableLater: () => { throw new Error('no awakeables here'); },
    resolveAwakeable: () => { throw new Error('no awakeables here'); },
    post: () => { throw new Error('no mailboxes here'); },
    call: () => { throw new Error('no calls here'); },
    callWithMailbox: () => { throw new Error('no calls here'); },
    async run<T>(name: string, action: () => Promise<T>): Promise<T> {
      names.push(name);
      if (records.has(name)) return JSON.parse(JSON.stringify(records.get(name))) as T;
      const value = await action();
      records.set(name, JSON.parse(JSON.stringify(value)));
      return value;
    },
  };
}

const turn = { session: { id: 'session-user__a__default' } } as unknown as Turn;
const choice = { ok: true as const, provider: {} as never, model: 'm', maxTokens: 1 };

test('journaledStream: a finished model call is replayed from the journal, its Map restored; calls numbered per session', async () => {
  let calls = 0;
  const stream = async (): Promise<StreamResult> => {
    calls++;
    return { text: `answer ${calls}`, toolUses: [], inputErrors: new Map([['t1', 'bad json']]), aborted: false };
  };
  const records = new Map<string, unknown>();
  const names: string[] = [];
  const first = journaledStream(stream, fakeJournal(records, 'a1', names));
  assert.equal((await first(turn, choice)).text, 'answer 1');
  assert.equal((await first(turn, choice)).text, 'answer 2');
  const replay = journaledStream(stream, fakeJournal(records, 'a2', names));
  const again = await replay(turn, choice);
  assert.equal(again.text, 'answer 1');
  assert.ok(again.inputErrors instanceof Map);
  assert.equal(again.inputErrors.get('t1'), 'bad json');
  assert.equal((await replay(turn, choice)).text, 'answer 2');
  assert.equal(calls, 2, 'the model was asked again for a finished call');
  assert.equal((await replay(turn, choice)).text, 'answer 3');
  assert.deepEqual(names.slice(0, 2), ['model session-user__a__default 1', 'model session-user__a__default 2']);
});

test('journaledExecute: a finished tool is not run again; one an earlier attempt started and never finished is answered interrupted', async () => {
  let runs = 0;
  let hang = false;
  const execute: ExecuteTool = async () => {
    runs++;
    if (hang) return new Promise(() => undefined); // the worker dies while this runs
    return { content: 'ran' };
  };
  const tool = { name: 'shell' } as Tool;
  const context = (id: string) => ({ toolUseId: id }) as ToolContext;
  const records = new Map<string, unknown>();
  const first = journaledExecute(execute, fakeJournal(records, 'a1'));
  assert.deepEqual(await first(tool, {}, context('t1')), { content: 'ran' });
  hang = true;
  void first(tool, {}, context('t2'));
  await new Promise((r) => setImmediate(r));
  assert.equal(runs, 2);
  // The replay on another worker.
  hang = false;
  const replay = journaledExecute(execute, fakeJournal(records, 'a2'));
  assert.deepEqual(await replay(tool, {}, context('t1')), { content: 'ran' });
  const cut = await replay(tool, {}, context('t2'));
  assert.equal(cut.content, CUT_BY_WORKER);
  assert.equal(cut.failure, 'interrupted');
  assert.equal(cut.isError, true);
  assert.equal(runs, 2, 'a tool ran twice');
  // A call this attempt starts itself runs.
  assert.deepEqual(await replay(tool, {}, context('t3')), { content: 'ran' });
  assert.equal(runs, 3);
});
