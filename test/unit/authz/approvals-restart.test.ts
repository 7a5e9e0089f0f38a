import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync } from 'node:fs';
import { createApprovalQueue, EXPIRED_REASON, SHUTDOWN_REASON, type RaiseInput } from '../../../src/authz/approvals';
import type { Layout } from '../../../src/storage/layout';
import { counterIds, fixedClock, recordingBus, tempLayout } from '../../helpers/authz-fixtures';

const RUN = 'run-7';

function request(toolUseId: string, approverId = 'user'): RaiseInput {
  return {
    sessionId: 'session-user__ur-agent__default', participantId: 'ur-agent', chain: ['user', 'ur-agent'],
    toolUseId, toolName: 'shell', input: { command: `echo ${toolUseId}` }, ruleId: 'shell-ask', reason: 'Shell asks', approverId,
  };
}

/** A queue as a fresh process would make it: new bus, loaded from disk. */
async function reopen(layout: Layout, idStart = 0) {
  const { bus, events } = recordingBus(RUN);
  const queue = createApprovalQueue({ layout, runId: RUN, bus, clock: fixedClock('2026-03-05T00:00:00.000Z'), ids: counterIds(idStart) });
  const loaded = await queue.load();
  return { queue, events, loaded };
}

test('after a restart, pending requests are re-offered with their latest approver; resolved ones are not', async () => {
  const tmp = await tempLayout();
  try {
    const first = await reopen(tmp.layout);
    first.queue.raise([request('tu-1'), request('tu-2', 'lead'), request('tu-3')]);
    first.queue.resolve(['apr-1'], 'approved', { decidedBy: 'user' });
    first.queue.reassign('apr-2', 'user');

    const second = await reopen(tmp.layout, 3);
    assert.deepEqual(second.loaded.issues, []);
    assert.deepEqual(second.loaded.pending.map((p) => [p.requestId, p.approverId]), [['apr-2', 'user'], ['apr-3', 'user']]);
    assert.deepEqual(second.loaded.pending[0]!.input, { command: 'echo tu-2' });
    assert.equal(second.queue.get('apr-1')!.outcome!.decision, 'approved');
    // The new process can decide what it re-offers; the refused-twice rule still holds.
    assert.equal(second.queue.resolve(['apr-1'], 'rejected', { decidedBy: 'user' }).ok, false);
    assert.deepEqual(second.queue.resolve(['apr-3'], 'approved', { decidedBy: 'user' }), { ok: true });
    assert.equal(second.queue.raise([request('tu-4')])[0]!.requestId, 'apr-4');
    // An id source that restarted from zero skips the ids already in the file.
    const restarted = await reopen(tmp.layout, 0);
    assert.deepEqual(restarted.queue.raise([request('tu-5'), request('tu-6')]).map((h) => h.requestId), ['apr-5', 'apr-6']);

    const third = await reopen(tmp.layout, 6);
    assert.deepEqual(third.loaded.pending.map((p) => p.requestId), ['apr-2', 'apr-4', 'apr-5', 'apr-6']);
  } finally {
    await tmp.cleanup();
  }
});

test('expire marks requests whose turn cannot resume as expired, "interrupted, ask again"', async () => {
  const tmp = await tempLayout();
  try {
    const first = await reopen(tmp.layout);
    first.queue.raise([request('tu-1'), request('tu-2')]);
    const second = await reopen(tmp.layout, 2);
    assert.deepEqual(second.queue.expire(['apr-1', 'apr-2', 'apr-9']), ['apr-1', 'apr-2']);
    assert.deepEqual(await second.queue.wait('apr-1'), { decision: 'expired', decidedBy: 'cancel', reason: EXPIRED_REASON });
    const resolves = second.events.filter((e) => e.type === 'approval-resolve');
    assert.equal(resolves.length, 2);
    assert.ok(resolves.every((e) => e.type === 'approval-resolve' && e.decision === 'rejected' && e.reason === EXPIRED_REASON));
    assert.equal(second.queue.resolve(['apr-1'], 'approved', { decidedBy: 'user' }).ok, false, 'an expired request cannot be approved');

    const third = await reopen(tmp.layout, 2);
    assert.deepEqual(third.loaded.pending, []);
    assert.equal(third.queue.get('apr-2')!.outcome!.decision, 'expired');
  } finally {
    await tmp.cleanup();
  }
});

test('a torn last line is dropped with an issue, cut off, and later appends stay readable', async () => {
  const tmp = await tempLayout();
  try {
    const first = await reopen(tmp.layout);
    first.queue.raise([request('tu-1'), request('tu-2')]);
    appendFileSync(tmp.layout.approvals(RUN), '{"kind":"resolve","requestId":"apr-1","deci');

    const second = await reopen(tmp.layout, 2);
    assert.equal(second.loaded.issues.length, 1);
    assert.match(second.loaded.issues[0]!, /approvals\.jsonl:3: dropped a torn last line/);
    assert.deepEqual(second.loaded.pending.map((p) => p.requestId), ['apr-1', 'apr-2']);
    assert.deepEqual(second.queue.resolve(['apr-1'], 'rejected', { decidedBy: 'user' }), { ok: true });

    const third = await reopen(tmp.layout, 2);
    assert.deepEqual(third.loaded.issues, [], 'the torn tail was cut, the new line is intact');
    assert.deepEqual(third.loaded.pending.map((p) => p.requestId), ['apr-2']);
    assert.equal(readFileSync(tmp.layout.approvals(RUN), 'utf8').split('\n').length, 4);
  } finally {
    await tmp.cleanup();
  }
});

test('a complete last line without newline is kept and the next append does not glue onto it', async () => {
  const tmp = await tempLayout();
  try {
    const first = await reopen(tmp.layout);
    first.queue.raise([request('tu-1')]);
    const line = JSON.stringify({ kind: 'request', version: 1, ...request('tu-2'), requestId: 'apr-2', at: '2026-03-04T00:00:00.000Z' });
    appendFileSync(tmp.layout.approvals(RUN), line);
    const second = await reopen(tmp.layout, 2);
    assert.deepEqual(second.loaded.pending.map((p) => p.requestId), ['apr-1', 'apr-2']);
    second.queue.resolve(['apr-2'], 'approved', { decidedBy: 'user' });
    const third = await reopen(tmp.layout, 2);
    assert.deepEqual(third.loaded.issues, []);
    assert.deepEqual(third.loaded.pending.map((p) => p.requestId), ['apr-1']);
  } finally {
    await tmp.cleanup();
  }
});

test('bad lines are reported by line number and skipped; nothing else is lost', async () => {
  const tmp = await tempLayout();
  try {
    const first = await reopen(tmp.layout);
    first.queue.raise([request('tu-1')]);
    appendFileSync(tmp.layout.approvals(RUN), '{"kind":"resolve","requestId":"apr-1","decision":"maybe","decidedBy":"user","reason":"","at":"x"}\n');
    appendFileSync(tmp.layout.approvals(RUN), '{"kind":"resolve","requestId":"apr-8","decision":"approved","decidedBy":"user","reason":"","at":"x"}\n');
    first.queue.raise([request('tu-2')]);
    const second = await reopen(tmp.layout, 2);
    assert.equal(second.loaded.issues.length, 2);
    assert.match(second.loaded.issues[0]!, /:2: decision/);
    assert.match(second.loaded.issues[1]!, /unknown request apr-8/);
    assert.deepEqual(second.loaded.pending.map((p) => p.requestId), ['apr-1', 'apr-2']);
  } finally {
    await tmp.cleanup();
  }
});

test('close: waiters end at once, nothing is written, the next process re-offers the request', async () => {
  const tmp = await tempLayout();
  try {
    const first = await reopen(tmp.layout);
    first.queue.raise([request('tu-1')]);
    const controller = new AbortController();
    const waiting = first.queue.wait('apr-1', controller.signal);
    const before = readFileSync(tmp.layout.approvals(RUN), 'utf8');
    first.queue.close();
    controller.abort();
    assert.deepEqual(await waiting, { decision: 'rejected', decidedBy: 'cancel', reason: SHUTDOWN_REASON });
    assert.equal(first.queue.resolve(['apr-1'], 'approved', { decidedBy: 'user' }).ok, false);
    assert.throws(() => first.queue.raise([request('tu-2')]), /closed/);
    assert.equal(readFileSync(tmp.layout.approvals(RUN), 'utf8'), before);
    const second = await reopen(tmp.layout, 1);
    assert.deepEqual(second.loaded.pending.map((p) => p.requestId), ['apr-1']);
  } finally {
    await tmp.cleanup();
  }
});
