import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createApprovalQueue, CANCELLED_REASON, type RaiseInput } from '../../../src/authz/approvals';
import { counterIds, fixedClock, recordingBus, tempLayout } from '../../helpers/authz-fixtures';

const RUN = 'run-1';

function request(overrides: Partial<RaiseInput> = {}): RaiseInput {
  return {
    sessionId: 'session-ur-agent__scribe__default',
    participantId: 'scribe',
    chain: ['user', 'ur-agent', 'scribe'],
    toolUseId: 'tu-1',
    toolName: 'file_write',
    input: { path: 'notes.md', content: 'hello' },
    ruleId: 'writes-ask',
    reason: 'Writes need approval',
    approverId: 'user',
    ...overrides,
  };
}

async function setup() {
  const tmp = await tempLayout();
  const { bus, events } = recordingBus(RUN);
  const clock = fixedClock();
  const queue = createApprovalQueue({ layout: tmp.layout, runId: RUN, bus, clock, ids: counterIds() });
  await queue.load();
  const lines = () => readFileSync(tmp.layout.approvals(RUN), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  return { ...tmp, bus, events, clock, queue, lines };
}

test('raise persists each request before emitting approval-request', async () => {
  const s = await setup();
  try {
    const seenOnDisk: number[] = [];
    s.bus.subscribe('approval-request', () => seenOnDisk.push(s.lines().length));
    const handles = s.queue.raise([request(), request({ toolUseId: 'tu-2', toolName: 'shell', input: { command: 'ls' } })]);
    assert.deepEqual(handles.map((h) => h.requestId), ['apr-1', 'apr-2']);
    assert.deepEqual(seenOnDisk, [2, 2], 'both lines are on disk when the first event is emitted');
    const lines = s.lines();
    assert.deepEqual(lines[0], {
      kind: 'request', version: 1, requestId: 'apr-1', sessionId: 'session-ur-agent__scribe__default', participantId: 'scribe',
      chain: ['user', 'ur-agent', 'scribe'], toolUseId: 'tu-1', toolName: 'file_write', input: { path: 'notes.md', content: 'hello' },
      ruleId: 'writes-ask', reason: 'Writes need approval', approverId: 'user', at: '2026-03-04T05:06:07.000Z',
    });
    const requests = s.events.filter((e) => e.type === 'approval-request');
    assert.equal(requests.length, 2);
    assert.equal(requests[1]!.type === 'approval-request' && requests[1]!.toolName, 'shell');
    assert.deepEqual(s.queue.pending().map((p) => p.requestId), ['apr-1', 'apr-2']);
  } finally {
    await s.cleanup();
  }
});

test('resolve wakes the waiter, persists a resolve line and emits approval-resolve', async () => {
  const s = await setup();
  try {
    const [h] = s.queue.raise([request()]);
    const waiting = s.queue.wait(h!.requestId);
    assert.deepEqual(s.queue.resolve([h!.requestId], 'approved', { decidedBy: 'user', reason: 'fine' }), { ok: true });
    assert.deepEqual(await waiting, { decision: 'approved', decidedBy: 'user', reason: 'fine' });
    assert.deepEqual(s.lines()[1], { kind: 'resolve', version: 1, requestId: 'apr-1', decision: 'approved', decidedBy: 'user', reason: 'fine', at: '2026-03-04T05:06:07.000Z' });
    const resolved = s.events.filter((e) => e.type === 'approval-resolve');
    assert.equal(resolved.length, 1);
    assert.deepEqual(s.queue.pending(), []);
    // A late waiter gets the stored outcome at once.
    assert.equal((await s.queue.wait(h!.requestId)).decision, 'approved');
  } finally {
    await s.cleanup();
  }
});

test('a batch is resolved together; default reason names the decider', async () => {
  const s = await setup();
  try {
    const hs = s.queue.raise([request(), request({ toolUseId: 'tu-2' }), request({ toolUseId: 'tu-3' })]);
    const waits = hs.map((h) => s.queue.wait(h.requestId));
    assert.deepEqual(s.queue.resolve(['apr-1', 'apr-3'], 'rejected', { decidedBy: 'user' }), { ok: true });
    assert.deepEqual(await waits[0], { decision: 'rejected', decidedBy: 'user', reason: 'rejected by user' });
    assert.equal((await waits[2])!.decision, 'rejected');
    assert.deepEqual(s.queue.pending().map((p) => p.requestId), ['apr-2']);
  } finally {
    await s.cleanup();
  }
});

test('a batch with an unknown or already-resolved id is refused whole and nothing is applied', async () => {
  const s = await setup();
  try {
    s.queue.raise([request(), request({ toolUseId: 'tu-2' })]);
    assert.deepEqual(s.queue.resolve(['apr-1'], 'approved', { decidedBy: 'user' }), { ok: true });
    const linesBefore = s.lines().length;
    const eventsBefore = s.events.length;

    const unknown = s.queue.resolve(['apr-2', 'apr-9'], 'approved', { decidedBy: 'user' });
    assert.equal(unknown.ok, false);
    assert.match(!unknown.ok ? unknown.error : '', /unknown approval request "apr-9".*nothing was approved/);

    const twice = s.queue.resolve(['apr-2', 'apr-1'], 'rejected', { decidedBy: 'user' });
    assert.equal(twice.ok, false);
    assert.match(!twice.ok ? twice.error : '', /apr-1 was already approved \(by user\)/);

    assert.equal(s.lines().length, linesBefore, 'no line written');
    assert.equal(s.events.length, eventsBefore, 'no event emitted');
    assert.deepEqual(s.queue.pending().map((p) => p.requestId), ['apr-2']);
    assert.equal(s.queue.resolve([], 'approved', { decidedBy: 'user' }).ok, false);
  } finally {
    await s.cleanup();
  }
});

test('onlyApprover refuses a request that waits on someone else', async () => {
  const s = await setup();
  try {
    s.queue.raise([request({ approverId: 'ur-agent' }), request({ toolUseId: 'tu-2', approverId: 'user' })]);
    const r = s.queue.resolve(['apr-1', 'apr-2'], 'approved', { decidedBy: 'agent:ur-agent', onlyApprover: 'ur-agent' });
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.error : '', /apr-2 waits on user, not on ur-agent/);
    assert.equal(s.queue.pending().length, 2);
    assert.deepEqual(s.queue.resolve(['apr-1'], 'approved', { decidedBy: 'agent:ur-agent', onlyApprover: 'ur-agent' }), { ok: true });
    assert.equal(s.queue.get('apr-1')!.outcome!.decidedBy, 'agent:ur-agent');
  } finally {
    await s.cleanup();
  }
});

test('reassign climbs: persisted, re-emitted with the new approver, filters follow', async () => {
  const s = await setup();
  try {
    const [h] = s.queue.raise([request({ approverId: 'lead' })]);
    assert.deepEqual(s.queue.pending({ approverId: 'lead' }).map((p) => p.requestId), ['apr-1']);
    assert.deepEqual(s.queue.reassign(h!.requestId, 'user'), { ok: true });
    assert.deepEqual(s.queue.pending({ approverId: 'lead' }), []);
    assert.deepEqual(s.queue.pending({ approverId: 'user' }).map((p) => p.requestId), ['apr-1']);
    assert.equal(s.lines()[1].kind, 'reassign');
    assert.equal(s.lines()[1].approverId, 'user');
    const emitted = s.events.filter((e) => e.type === 'approval-request').map((e) => (e.type === 'approval-request' ? e.approverId : ''));
    assert.deepEqual(emitted, ['lead', 'user']);
    assert.equal(s.queue.reassign('apr-7', 'user').ok, false);
    s.queue.resolve(['apr-1'], 'approved', { decidedBy: 'user' });
    assert.equal(s.queue.reassign('apr-1', 'lead').ok, false, 'a resolved request cannot climb');
  } finally {
    await s.cleanup();
  }
});

test('withdraw rejects pending requests as cancel and skips resolved ones', async () => {
  const s = await setup();
  try {
    s.queue.raise([request(), request({ toolUseId: 'tu-2' })]);
    s.queue.resolve(['apr-2'], 'approved', { decidedBy: 'user' });
    const waiting = s.queue.wait('apr-1');
    assert.deepEqual(s.queue.withdraw(['apr-1', 'apr-2', 'apr-5'], 'turn interrupted'), ['apr-1']);
    assert.deepEqual(await waiting, { decision: 'rejected', decidedBy: 'cancel', reason: 'turn interrupted' });
    assert.equal(s.queue.get('apr-2')!.outcome!.decision, 'approved');
  } finally {
    await s.cleanup();
  }
});

test('aborting a wait withdraws the request', async () => {
  const s = await setup();
  try {
    s.queue.raise([request()]);
    const controller = new AbortController();
    const waiting = s.queue.wait('apr-1', controller.signal);
    controller.abort();
    assert.deepEqual(await waiting, { decision: 'rejected', decidedBy: 'cancel', reason: CANCELLED_REASON });
    assert.equal(s.lines()[1].decidedBy, 'cancel');
    const resolved = s.events.find((e) => e.type === 'approval-resolve');
    assert.ok(resolved && resolved.type === 'approval-resolve' && resolved.decidedBy === 'cancel');
    // Already aborted signal: withdrawn at once.
    s.queue.raise([request({ toolUseId: 'tu-2' })]);
    assert.equal((await s.queue.wait('apr-2', AbortSignal.abort())).decidedBy, 'cancel');
    await assert.rejects(s.queue.wait('apr-99'), /unknown request apr-99/);
  } finally {
    await s.cleanup();
  }
});

test("load({ idsOnly }): the file's requests are other queues' (engine mode's hub): none pending or decidable here, their ids never reused", async () => {
  const s = await setup();
  try {
    // Another queue (a worker's) wrote two requests, one of them decided.
    s.queue.raise([request(), request({ toolUseId: 'tu-2' })]);
    assert.deepEqual(s.queue.resolve(['apr-2'], 'approved', { decidedBy: 'user' }), { ok: true });
    const hub = createApprovalQueue({ layout: s.layout, runId: RUN, bus: recordingBus(RUN).bus, clock: s.clock, ids: counterIds() });
    assert.deepEqual(await hub.load({ idsOnly: true }), { pending: [], issues: [] });
    assert.deepEqual(hub.pending(), []);
    assert.equal(hub.get('apr-1'), undefined);
    assert.equal(hub.resolve(['apr-1'], 'approved', { decidedBy: 'user' }).ok, false, 'decided another queue\'s request');
    // Its own request (a workflow's budget) takes an id the file does not hold.
    assert.deepEqual(hub.raise([request({ toolUseId: 'budget-1', toolName: 'budget' })]).map((r) => r.requestId), ['apr-h1']);
    assert.deepEqual(s.lines().map((l: { requestId: string; kind: string }) => `${l.kind} ${l.requestId}`), ['request apr-1', 'request apr-2', 'resolve apr-2', 'request apr-h1']);
  } finally {
    await s.cleanup();
  }
});

test("load({ idsOnly }): a request another queue raises after the load never shares an id with this queue's own, either way", async () => {
  const s = await setup();
  try {
    // The hub loads an empty file; then a worker's queue (loaded before) asks apr-1, the hub its
    // own, the worker again. A shared id would send the user's decision on one to the other
    // (the hub routes a decision to the worker that holds the id).
    const hub = createApprovalQueue({ layout: s.layout, runId: RUN, bus: recordingBus(RUN).bus, clock: s.clock, ids: counterIds() });
    await hub.load({ idsOnly: true });
    s.queue.raise([request()]);
    hub.raise([request({ toolUseId: 'budget-1', toolName: 'budget' })]);
    s.queue.raise([request({ toolUseId: 'tu-2' })]);
    hub.raise([request({ toolUseId: 'budget-2', toolName: 'budget' })]);
    const ids = s.lines().map((l: { requestId: string }) => l.requestId);
    assert.equal(new Set(ids).size, ids.length, `ids shared: ${ids.join(' ')}`);
    // A hub restarted later keeps clear of the earlier hub's ids too.
    const next = createApprovalQueue({ layout: s.layout, runId: RUN, bus: recordingBus(RUN).bus, clock: s.clock, ids: counterIds() });
    await next.load({ idsOnly: true });
    const [again] = next.raise([request({ toolUseId: 'budget-3', toolName: 'budget' })]);
    assert.ok(!ids.includes(again!.requestId), again!.requestId);
  } finally {
    await s.cleanup();
  }
});
