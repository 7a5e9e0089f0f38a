import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { turnSteps } from '../../../src/engine/turn-steps';
import type { DurableJournal } from '../../../src/engine/durable-steps';
import type { TurnDeps } from '../../../src/runtime/agent-loop';
import type { EventFeed } from '../../../src/engine/event-feed';
import type { ApprovalRequest } from '../../../src/authz/approvals';
import type { RemoteAnswer } from '../../../src/runtime/ports';
import type { TurnInput } from '../../../src/engine/turn-messages';

/**
 * Approvals across objects (docs/engine.md#approvals-across-objects), the engine's side with a
 * journal that records what it is asked: the caller's mail, the answer sent after the deciding
 * tool's step (again on a replay that returns the step from the journal), a climb, and the
 * asker's request posted up with what its first attempt recorded.
 */
const feed = { publishAwakeable: () => undefined } as unknown as EventFeed;
const LEAD = 'session-user__lead__default';
const BUILDER = 'session-lead__builder__default';

const request = (requestId: string): ApprovalRequest => ({
  requestId, sessionId: BUILDER, participantId: 'builder', chain: ['user', 'lead', 'builder'], toolUseId: 'call_2',
  toolName: 'shell', input: { command: 'sh tool.sh' }, ruleId: 'r', reason: 'ask', approverId: 'lead', at: '2026-01-01T00:00:00.000Z',
});

interface Recorded {
  readonly resolved: [string, unknown][];
  readonly posted: [string, unknown][];
  readonly calls: { sessionId: string; input: TurnInput; mailbox: string }[];
}

/** A journal: steps recorded by name (returned from `records` on a replay), mail and outcome scripted in `news`. */
function journal(rec: Recorded, records: Map<string, unknown>, news: ({ outcome: unknown } | { items: unknown })[], answer?: unknown): DurableJournal {
  return {
    attempt: 'a', attemptEnded: new AbortController().signal, cancelled: new AbortController().signal, invocationId: 'inv_lead',
    async run<T>(name: string, action: () => Promise<T>): Promise<T> {
      if (records.has(name)) return JSON.parse(JSON.stringify(records.get(name))) as T;
      const value = await action();
      records.set(name, JSON.parse(JSON.stringify(value)));
      return value;
    },
    awakeable: () => ({ id: 'awk-user', promise: new Promise(() => undefined) }),
    awakeableLater: <T>() => ({ id: 'awk-decision', wait: () => (answer === undefined ? new Promise<T>(() => undefined) : Promise.resolve(answer as T)) }),
    resolveAwakeable: (id, value) => void rec.resolved.push([id, value]),
    post: (mailbox, item) => void rec.posted.push([mailbox, item]),
    call: () => { throw new Error('a call with a mailbox expected'); },
    callWithMailbox: (sessionId, input, mailbox) => {
      rec.calls.push({ sessionId, input, mailbox });
      return { next: async () => news.shift() ?? new Promise(() => undefined), cancel: () => undefined };
    },
  };
}

const delegation = {
  sessionId: BUILDER, initiatorId: 'lead', responderId: 'builder', name: 'default', text: 'build it',
  chain: ['user', 'lead', 'builder'], sessionChain: [LEAD, BUILDER],
};

test('the caller takes its mail while it waits; its agent\'s decision is sent after the deciding tool\'s step, again on a replay; the outcome ends the call', async () => {
  for (const attempt of ['first', 'replay'] as const) {
    const records = new Map<string, unknown>(attempt === 'replay' ? [['tool-start call_9', 'earlier'], ['tool call_9', { content: 'approved apr-1', isError: false, answers: [{ awakeable: 'awk-b', answer: { kind: 'decision', decision: 'approved' } }] }]] : []);
    const rec: Recorded = { resolved: [], posted: [], calls: [] };
    const steps = turnSteps(feed);
    steps.wrapTurn({ stream: async () => ({}), decideAsks: async () => undefined } as unknown as TurnDeps);
    let ran = 0;
    const execute = steps.wrapExecute(async (_tool, _input, context) => {
      ran++;
      steps.across.decide('apr-1', { kind: 'decision', decision: 'approved' }, context.toolUseId);
      return { content: 'approved apr-1', isError: false };
    });
    const news: ({ outcome: unknown } | { items: unknown })[] = [{ items: [{ awakeable: 'awk-b', request: request('apr-1') }, { not: 'a request' }] }, { outcome: { kind: 'done', text: 'built' } }];
    steps.begin('run-1', LEAD, journal(rec, records, news), [{ participantId: 'ur', mailbox: 'inv_ur/1' }]);
    const delivered: string[] = [];
    const call = steps.delegate(delegation, new AbortController().signal, (r) => delivered.push(r.requestId));
    assert.equal(rec.calls[0]!.mailbox, 'inv_lead/1');
    assert.deepEqual(rec.calls[0]!.input.upstream, [{ participantId: 'ur', mailbox: 'inv_ur/1' }, { participantId: 'lead', mailbox: 'inv_lead/1' }], 'the callers that decide, the caller last');
    assert.deepEqual(delivered, [], 'nothing taken before the caller waits');
    call.poll!();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(delivered, ['apr-1'], 'the request delivered; what is not a request ignored');
    assert.equal(steps.across.held('apr-1')?.toolName, 'shell');
    const result = await execute({ name: 'resolve_approval' } as never, {}, { toolUseId: 'call_9', sessionId: LEAD } as never);
    assert.deepEqual(result, { content: 'approved apr-1', isError: false }, 'the answers are not part of the tool\'s result');
    assert.equal(ran, attempt === 'first' ? 1 : 0);
    assert.deepEqual(rec.resolved, [['awk-b', { kind: 'decision', decision: 'approved' }]], `${attempt}: the answer sent once its step is journaled`);
    assert.equal(steps.across.held('apr-1'), undefined, 'answered: no longer held');
    assert.ok(steps.across.knows('apr-1'), 'still known: never decided through this core\'s queue');
    call.poll!();
    assert.deepEqual(await call.outcome, { kind: 'done', text: 'built' });
    steps.end(LEAD);
  }
});

test('a held request left undecided climbs through the engine; a request asked again by a replay posts what the first attempt recorded and supersedes it', async () => {
  const rec: Recorded = { resolved: [], posted: [], calls: [] };
  const steps = turnSteps(feed);
  steps.wrapTurn({ stream: async () => ({}), decideAsks: async () => undefined } as unknown as TurnDeps);
  steps.wrapExecute(async () => ({ content: '', isError: false }));
  steps.begin('run-1', LEAD, journal(rec, new Map(), [{ items: [{ awakeable: 'awk-b', request: request('apr-1') }] }]));
  const call = steps.delegate(delegation, new AbortController().signal, () => undefined);
  call.poll!();
  await new Promise((r) => setImmediate(r));
  steps.across.climb('apr-1');
  steps.across.climb('apr-1');
  assert.deepEqual(rec.resolved, [['awk-b', { kind: 'climb' }]], 'climbed once');
  steps.end(LEAD);

  // The builder's side, replayed: the step holds the first attempt's request (apr-1), this attempt raised apr-2.
  const asker = { parent: undefined, session: { id: BUILDER } } as never;
  const records = new Map<string, unknown>([['approval-up 1', { awakeable: 'awk-decision', request: request('apr-1') }]]);
  const up: Recorded = { resolved: [], posted: [], calls: [] };
  const builder = turnSteps(feed);
  builder.wrapTurn({ stream: async () => ({}), decideAsks: async () => undefined } as unknown as TurnDeps);
  builder.wrapExecute(async () => ({ content: '', isError: false }));
  builder.begin('run-1', BUILDER, journal(up, records, [], { kind: 'decision', decision: 'rejected', reason: 'no' }), [{ participantId: 'lead', mailbox: 'inv_lead/1' }]);
  assert.equal(builder.across.upstream(asker, { ...request('apr-2'), approverId: 'ur' }, { answered: () => undefined, superseded: () => undefined }), false, 'no waiting call of that approver up the chain');
  const answers: RemoteAnswer[] = [];
  const superseded: string[] = [];
  const done = new Promise<void>((resolve) => {
    assert.ok(builder.across.upstream(asker, request('apr-2'), { answered: (a) => { answers.push(a); resolve(); }, superseded: (id) => void superseded.push(id) }));
  });
  await done;
  assert.deepEqual(up.posted, [['inv_lead/1', { awakeable: 'awk-decision', request: request('apr-1') }]]);
  assert.deepEqual(superseded, ['apr-1']);
  assert.deepEqual(answers, [{ kind: 'decision', decision: 'rejected', reason: 'no' }]);
});
