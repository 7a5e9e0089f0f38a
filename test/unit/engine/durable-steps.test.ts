import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CUT_BY_WORKER, journaledAsks, journaledExecute, journaledStream, type DurableJournal, type ToolFences } from '../../../src/engine/durable-steps';
import type { Batch } from '../../../src/runtime/call-state';
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

/** One attempt of a turn on a worker: its model step, the batch's decisions and its tools, with fences as turn-steps.ts wires them. */
function attemptOf(records: Map<string, unknown>, attempt: string, toolIds: string[], execute: ExecuteTool, names: string[] = []) {
  const journal = fakeJournal(records, attempt, names);
  const fences: ToolFences = new Map();
  let made = 0;
  const stream = journaledStream(async () => {
    made++;
    return { text: '', toolUses: toolIds.map((id) => ({ type: 'tool_use' as const, id, name: 'shell', input: {} })), inputErrors: new Map(), aborted: false };
  }, journal, fences);
  let decided = 0;
  const asks = journaledAsks(async () => { decided++; }, journal, fences);
  const run = journaledExecute(execute, journal, undefined, fences);
  const batch = { calls: toolIds.map((id) => ({ use: { id } })) } as unknown as Batch;
  const liveTurn = { session: { id: 'session-user__a__default' }, controller: new AbortController() } as unknown as Turn;
  return {
    model: () => stream(liveTurn, choice),
    ask: () => asks(liveTurn, batch),
    tool: (id: string) => run({ name: 'shell' } as Tool, {}, { toolUseId: id } as ToolContext),
    made: () => made,
    decided: () => decided,
  };
}

test('journaledExecute with fences: a model call\'s first tool in a batch with no decision starts on the model step alone (no tool-start); a later attempt answers it interrupted, never runs it again, and runs a tool of the batch that never started', async () => {
  let runs = 0;
  let hang = true;
  const ran: string[] = [];
  const execute: ExecuteTool = async (_tool, _input, context) => {
    runs++;
    ran.push(context.toolUseId);
    if (hang) return new Promise(() => undefined); // the worker dies while it runs
    return { content: `ran ${context.toolUseId}` };
  };
  const records = new Map<string, unknown>();
  const names: string[] = [];
  const first = attemptOf(records, 'a1', ['t1', 't2'], execute, names);
  await first.model();
  void first.tool('t1');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(ran, ['t1']);
  assert.deepEqual(names, ['model session-user__a__default 1', 'tool t1'], 'the first tool journaled a tool-start, or something else');
  // The replay on another worker: the model call comes from the journal, t1 is not run again, t2 (never started) runs.
  hang = false;
  const replay = attemptOf(records, 'a2', ['t1', 't2'], execute, names);
  await replay.model();
  assert.equal(replay.made(), 0, 'the model was asked again for a finished call');
  const cut = await replay.tool('t1');
  assert.equal(cut.content, CUT_BY_WORKER);
  assert.equal(cut.failure, 'interrupted');
  assert.deepEqual(await replay.tool('t2'), { content: 'ran t2' });
  assert.deepEqual(ran, ['t1', 't2'], 'a tool ran twice');
  assert.ok(names.includes('tool-start t2'), 'a tool past the first is fenced by its own tool-start');
  // A third attempt replays both results without running anything.
  const third = attemptOf(records, 'a3', ['t1', 't2'], execute);
  await third.model();
  assert.equal((await third.tool('t1')).content, CUT_BY_WORKER);
  assert.deepEqual(await third.tool('t2'), { content: 'ran t2' });
  assert.equal(runs, 2);
});

test('journaledAsks: a batch that waits on decisions journals `asks` first; a worker dying while it waits leaves the tool to run once on the next attempt (tool-start)', async () => {
  const ran: string[] = [];
  const execute: ExecuteTool = async (_tool, _input, context) => {
    ran.push(context.toolUseId);
    return { content: 'ran' };
  };
  const records = new Map<string, unknown>();
  const names: string[] = [];
  const first = attemptOf(records, 'a1', ['t1'], execute, names);
  await first.model();
  await first.ask();
  assert.equal(first.decided(), 1);
  // The worker dies while the request waits: nothing ran.
  const replay = attemptOf(records, 'a2', ['t1'], execute, names);
  await replay.model();
  await replay.ask();
  assert.deepEqual(await replay.tool('t1'), { content: 'ran' });
  assert.deepEqual(ran, ['t1']);
  assert.deepEqual(names.filter((n) => n.startsWith('asks') || n.startsWith('tool')), ['asks session-user__a__default 1', 'asks session-user__a__default 1', 'tool-start t1', 'tool t1']);
  assert.equal(records.get('tool-start t1'), 'a2');
});

test('journaledExecute: a tool whose batch waits on decisions that the attempt making the model call never journaled is answered interrupted (that attempt may have started it without asking)', async () => {
  let runs = 0;
  const execute: ExecuteTool = async () => {
    runs++;
    return new Promise(() => undefined);
  };
  const records = new Map<string, unknown>();
  const first = attemptOf(records, 'a1', ['t1'], execute);
  await first.model();
  void first.tool('t1'); // no decision needed: started on the model step, then the worker dies
  await new Promise((r) => setImmediate(r));
  assert.equal(runs, 1);
  // The next attempt's rules ask for a decision this time: its `asks` vouches for nothing the first attempt did.
  const replay = attemptOf(records, 'a2', ['t1'], execute);
  await replay.model();
  await replay.ask();
  const cut = await replay.tool('t1');
  assert.equal(cut.content, CUT_BY_WORKER);
  assert.equal(runs, 1, 'a tool ran twice');
});

test('fences across attempts: the first tool finished unfenced, the second cut mid-run, then a third attempt after a worker died again: nothing runs twice, nothing finished is lost', async () => {
  const ran: string[] = [];
  let hang = new Set(['t2']);
  const execute: ExecuteTool = async (_tool, _input, context) => {
    ran.push(context.toolUseId);
    if (hang.has(context.toolUseId)) return new Promise(() => undefined); // the worker dies while it runs
    return { content: `ran ${context.toolUseId}` };
  };
  const records = new Map<string, unknown>();
  const first = attemptOf(records, 'a1', ['t1', 't2', 't3'], execute);
  await first.model();
  assert.deepEqual(await first.tool('t1'), { content: 'ran t1' });
  void first.tool('t2');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(ran, ['t1', 't2']);
  // Second attempt: t1 comes from the journal, t2 (started by a1) is cut, t3 starts — and hangs: the worker dies again.
  hang = new Set(['t3']);
  const second = attemptOf(records, 'a2', ['t1', 't2', 't3'], execute);
  await second.model();
  assert.deepEqual(await second.tool('t1'), { content: 'ran t1' });
  assert.equal((await second.tool('t2')).content, CUT_BY_WORKER);
  void second.tool('t3');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(ran, ['t1', 't2', 't3']);
  // Third attempt: every answer is the journal's; t3, started by a2, is cut, never run again.
  hang = new Set();
  const third = attemptOf(records, 'a3', ['t1', 't2', 't3'], execute);
  await third.model();
  assert.equal(third.made(), 0);
  assert.deepEqual(await third.tool('t1'), { content: 'ran t1' });
  assert.equal((await third.tool('t2')).content, CUT_BY_WORKER);
  assert.equal((await third.tool('t3')).content, CUT_BY_WORKER);
  assert.deepEqual(ran, ['t1', 't2', 't3'], 'a tool ran twice');
});
