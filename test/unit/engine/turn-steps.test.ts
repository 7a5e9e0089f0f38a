import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { turnSteps } from '../../../src/engine/turn-steps';
import type { DurableJournal } from '../../../src/engine/durable-steps';
import type { TurnDeps } from '../../../src/runtime/agent-loop';
import type { EventFeed } from '../../../src/engine/event-feed';
import * as restate from '@restatedev/restate-sdk';
import type { TurnInput } from '../../../src/engine/turn-messages';

/** A journal that records the names of the steps run in it. */
function journal(names: string[]): DurableJournal {
  return {
    attempt: 'a', attemptEnded: new AbortController().signal, cancelled: new AbortController().signal, invocationId: 'inv',
    run: async (name, action) => { names.push(name); return action(); },
    awakeable: () => ({ id: 'awk', promise: new Promise(() => undefined) }),
    awakeableLater: () => ({ id: 'awk', wait: () => new Promise(() => undefined) }),
    resolveAwakeable: () => undefined,
    post: () => undefined,
    call: () => { throw new Error('no calls here'); },
    callWithMailbox: () => { throw new Error('no calls here'); },
  };
}

const feed = { publishAwakeable: () => undefined } as unknown as EventFeed;
const answer = { text: 'ok', toolUses: [], inputErrors: new Map(), aborted: false };

test('a kept core journals each turn in its own journal, its model steps counted from 1', async () => {
  const steps = turnSteps(feed);
  const deps = steps.wrapTurn({ stream: async () => answer, decideAsks: async () => undefined } as unknown as TurnDeps);
  const execute = steps.wrapExecute(async () => ({ content: 'done', isError: false }));
  const turn = { session: { id: 's1' }, sessionChain: ['s1'], controller: new AbortController() } as never;
  const first: string[] = [];
  const second: string[] = [];
  steps.begin('run', 's1', journal(first));
  await deps.stream(turn, {} as never, {} as never);
  await deps.stream(turn, {} as never, {} as never);
  await execute({ name: 'shell' } as never, {}, { toolUseId: 't1', sessionId: 's1' } as never);
  steps.end('s1');
  steps.begin('run', 's1', journal(second));
  await deps.stream(turn, {} as never, {} as never);
  steps.end('s1');
  assert.deepEqual(first, ['model s1 1', 'model s1 2', 'tool-start t1', 'tool t1']);
  assert.deepEqual(second, ['model s1 1']);
  await assert.rejects(() => deps.stream(turn, {} as never, {} as never), /outside a turn/);
});

/** A journal whose calls are recorded, answered by `answer`; `ended` aborts when the attempt is lost. */
function callingJournal(calls: { sessionId: string; input: TurnInput }[], cancels: string[], answer: Promise<unknown>, ended = new AbortController()): DurableJournal {
  return {
    ...journal([]),
    attemptEnded: ended.signal,
    call: (sessionId, input) => {
      calls.push({ sessionId, input });
      return { result: answer, cancel: () => void cancels.push(sessionId) };
    },
  };
}

const LEAD = 'session-user__lead__default';

const delegation = {
  sessionId: 'session-lead__builder__default', initiatorId: 'lead', responderId: 'builder', name: 'default', text: 'build it',
  chain: ['user', 'lead', 'builder'], sessionChain: ['session-user__lead__default', 'session-lead__builder__default'],
};

test('a delegation is a durable call of the target session\'s turn with the run and the chain; its outcome comes back checked', async () => {
  const steps = turnSteps(feed);
  steps.wrapTurn({ stream: async () => answer, decideAsks: async () => undefined } as unknown as TurnDeps);
  steps.wrapExecute(async () => ({ content: 'done', isError: false }));
  const calls: { sessionId: string; input: TurnInput }[] = [];
  const cancels: string[] = [];
  steps.begin('run-1', LEAD, callingJournal(calls, cancels, Promise.resolve({ kind: 'done', text: 'built' })));
  assert.deepEqual(await steps.delegate(delegation, new AbortController().signal).outcome, { kind: 'done', text: 'built' });
  const { sessionId: _id, ...rest } = delegation;
  assert.deepEqual(calls, [{ sessionId: delegation.sessionId, input: { runId: 'run-1', ...rest } }]);
  steps.end(LEAD);
  steps.begin('run-1', LEAD, callingJournal(calls, cancels, Promise.resolve({ kind: 'maybe' })));
  assert.equal((await steps.delegate(delegation, new AbortController().signal).outcome).kind, 'failed');
  steps.end(LEAD);
  steps.begin('run-1', LEAD, callingJournal(calls, cancels, Promise.reject(new restate.TerminalError('no such agent'))));
  assert.deepEqual(await steps.delegate(delegation, new AbortController().signal).outcome, { kind: 'failed', error: 'no such agent' });
  steps.end(LEAD);
  steps.begin('run-1', LEAD, callingJournal(calls, cancels, Promise.reject(new restate.CancelledError())));
  assert.deepEqual(await steps.delegate(delegation, new AbortController().signal).outcome, { kind: 'interrupted' });
  steps.end(LEAD);
  assert.deepEqual(cancels, []);
});

test('the caller\'s turn cancelled cancels the callee; a lost attempt leaves it running for the replay to wait on', async () => {
  const steps = turnSteps(feed);
  steps.wrapTurn({ stream: async () => answer, decideAsks: async () => undefined } as unknown as TurnDeps);
  steps.wrapExecute(async () => ({ content: 'done', isError: false }));
  const cancels: string[] = [];
  let settle: (value: unknown) => void = () => undefined;
  steps.begin('run-1', LEAD, callingJournal([], cancels, new Promise((r) => { settle = r; })));
  const caller = new AbortController();
  const running = steps.delegate(delegation, caller.signal).outcome;
  caller.abort();
  settle({ kind: 'interrupted' });
  assert.deepEqual(await running, { kind: 'interrupted' });
  assert.deepEqual(cancels, [delegation.sessionId]);
  steps.end(LEAD);
  const ended = new AbortController();
  steps.begin('run-1', LEAD, callingJournal([], cancels, new Promise((r) => { settle = r; }), ended));
  const lost = new AbortController();
  const again = steps.delegate(delegation, lost.signal).outcome;
  ended.abort();
  lost.abort();
  settle({ kind: 'interrupted' });
  await again;
  assert.deepEqual(cancels, [delegation.sessionId], 'a lost attempt cancelled the callee');
  steps.end(LEAD);
});

test('turns of several sessions run in one core at once, each journaled in its own invocation; a delegated turn run inside its caller\'s invocation journals in the caller\'s', async () => {
  const steps = turnSteps(feed);
  const deps = steps.wrapTurn({ stream: async () => answer, decideAsks: async () => undefined } as unknown as TurnDeps);
  const execute = steps.wrapExecute(async () => ({ content: 'done', isError: false }));
  const turnOf = (id: string, sessionChain: string[]): never => ({ session: { id }, sessionChain, controller: new AbortController() }) as never;
  const [a, b] = [[] as string[], [] as string[]];
  steps.begin('run', 'sa', journal(a));
  steps.begin('run', 'sb', journal(b));
  await deps.stream(turnOf('sa', ['sa']), {} as never, {} as never);
  await deps.stream(turnOf('sb', ['sb']), {} as never, {} as never);
  // sb delegated to sc inside its own invocation: sc has no journal of its own.
  await deps.stream(turnOf('sc', ['sb', 'sc']), {} as never, {} as never);
  await execute({ name: 'shell' } as never, {}, { toolUseId: 'tc', sessionId: 'sc' } as never);
  await execute({ name: 'shell' } as never, {}, { toolUseId: 'ta', sessionId: 'sa' } as never);
  steps.end('sa');
  await deps.stream(turnOf('sb', ['sb']), {} as never, {} as never);
  assert.deepEqual(a, ['model sa 1', 'tool-start ta', 'tool ta']);
  assert.deepEqual(b, ['model sb 1', 'model sc 1', 'tool-start tc', 'tool tc', 'model sb 2']);
  await assert.rejects(() => deps.stream(turnOf('sa', ['sa']), {} as never, {} as never), /outside a turn/);
  steps.end('sb');
  await assert.rejects(() => execute({ name: 'shell' } as never, {}, { toolUseId: 'tc2', sessionId: 'sc' } as never), /outside a turn/);
});
