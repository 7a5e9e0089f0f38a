import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBus } from '../../../src/events/bus';
import type { EventInput, LegionEvent } from '../../../src/events/types';
import { notifySchema } from '../../../src/config/remote-schema';
import { startNotify } from '../../../src/remote/notify';
import { startWebhookServer } from '../../helpers/webhook-server';

/** Notifications (docs/remote.md#notifications) against a local HTTP server: delivery, retries, a hanging and a failing endpoint. */

function setup(targets: unknown[]) {
  const bus = createBus({ runId: 'run-n' });
  const notices: string[] = [];
  let noticeWaiters: ((m: string) => void)[] = [];
  bus.subscribe('notice', (e) => {
    notices.push(e.message);
    const w = noticeWaiters;
    noticeWaiters = [];
    for (const f of w) f(e.message);
  });
  const nextNotice = (match: RegExp): Promise<string> => {
    const seen = notices.find((m) => match.test(m));
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const wait = (m: string): void => (match.test(m) ? resolve(m) : void noticeWaiters.push(wait));
      noticeWaiters.push(wait);
    });
  };
  const parsed = notifySchema().parse(targets);
  // closeGraceMs 5 s: close ends as soon as the last POST is answered; a loaded machine must not make it give up first.
  const notify = startNotify({ bus, targets: parsed, backoffMs: () => 5, closeGraceMs: 5_000 });
  return { bus, notices, nextNotice, notify };
}

const request: EventInput = {
  type: 'approval-request', requestId: 'apr-1', sessionId: 's1', participantId: 'worker', chain: ['user', 'worker'],
  toolUseId: 't1', toolName: 'file_write', input: { path: 'a.txt', content: 'x' }, ruleId: null, approverId: 'user',
};

test('notify: chosen events are POSTed as JSON with a one-line text; other kinds are not sent', async () => {
  const server = await startWebhookServer();
  const { bus, notify } = setup([{ url: server.url, events: ['approval-request', 'run-end'], headers: { Title: 'Legion' } }]);
  try {
    const first = server.next();
    bus.emit({ type: 'notice', level: 'info', message: 'not chosen' });
    bus.emit(request);
    const hook = await first;
    assert.equal(hook.path, '/hook/secret-topic');
    assert.equal(hook.headers['content-type'], 'application/json');
    assert.equal(hook.headers.title, 'Legion');
    const body = JSON.parse(hook.body) as { text: string; event: LegionEvent };
    assert.equal(body.text, 'legion: approval apr-1: worker wants file_write a.txt (user → worker)');
    assert.equal(body.event.type, 'approval-request');
    assert.equal(body.event.runId, 'run-n');
    const second = server.next();
    bus.emit({ type: 'run-end', reason: 'done' });
    assert.equal((JSON.parse((await second).body) as { event: LegionEvent }).event.type, 'run-end');
    assert.equal(server.received.length, 2);
  } finally {
    await notify.close();
    await server.close();
  }
});

test('notify: a 500 is retried with backoff until it succeeds; a lasting 500 is one notice, and recovery another', async () => {
  const server = await startWebhookServer((_hook, i) => (i === 0 || (i >= 2 && i < 6) ? 500 : 200));
  const { bus, notices, nextNotice, notify } = setup([{ url: server.url, events: ['run-end', 'notice'], retries: 2 }]);
  try {
    // Attempt 0 fails, attempt 1 succeeds: no notice.
    const ok = new Promise<void>((resolve) => { const t = setInterval(() => { if (server.received.length >= 2) { clearInterval(t); resolve(); } }, 5); });
    bus.emit({ type: 'run-end', reason: 'first' });
    await ok;
    assert.deepEqual(server.received.map((h) => (JSON.parse(h.body) as { event: { reason: string } }).event.reason), ['first', 'first']);
    // Attempts 2, 3, 4 fail (retries: 2) → one notice naming the origin only, never the secret path.
    bus.emit({ type: 'run-end', reason: 'second' });
    const failed = await nextNotice(/failed/);
    assert.match(failed, /^notify: http:\/\/127\.0\.0\.1:\d+\/… failed: HTTP 500 \(3 attempts; notification dropped\)/);
    assert.doesNotMatch(failed, /secret-topic/);
    assert.equal(server.received.length, 5);
    // Attempt 5 fails, 6 succeeds: recovered, said once; the failure notice itself was not POSTed.
    bus.emit({ type: 'run-end', reason: 'third' });
    await nextNotice(/works again/);
    assert.equal(notices.filter((m) => /failed/.test(m)).length, 1);
    assert.ok(server.received.every((h) => !h.body.includes('notify: ')), 'notify notices are not notified');
  } finally {
    await notify.close();
    await server.close();
  }
});

test('notify: a 400 is not retried', async () => {
  const server = await startWebhookServer(() => 400);
  const { bus, nextNotice, notify } = setup([{ url: server.url, events: ['run-end'], retries: 5 }]);
  try {
    bus.emit({ type: 'run-end', reason: 'x' });
    assert.match(await nextNotice(/failed/), /HTTP 400 \(1 attempt;/);
    assert.equal(server.received.length, 1);
  } finally {
    await notify.close();
    await server.close();
  }
});

test('notify: a hanging endpoint times out, never blocks the bus, and its queue stays bounded', async () => {
  const server = await startWebhookServer(() => 'hang');
  const bus = createBus({ runId: 'run-h' });
  const notices: string[] = [];
  bus.subscribe('notice', (e) => void notices.push(e.message));
  const [target] = notifySchema().parse([{ url: server.url, events: ['text-delta'], timeoutMs: 200, retries: 0 }]);
  const notify = startNotify({ bus, targets: [target!], queueLimit: 10, backoffMs: () => 5, closeGraceMs: 100 });
  try {
    // 1000 events while the endpoint hangs: emit stays synchronous and returns at once.
    for (let i = 0; i < 1000; i++) bus.emit({ type: 'text-delta', sessionId: 's', participantId: 'a', text: `d${i}` });
    assert.equal(bus.lastSeq(), 1001, "1000 deltas and the one \"behind\" notice");
    assert.equal(notices.filter((m) => /is behind/.test(m)).length, 1, 'dropping is said once');
    const timedOut = await new Promise<string>((resolve) => {
      const t = setInterval(() => { const m = notices.find((n) => /no answer within 200 ms/.test(n)); if (m) { clearInterval(t); resolve(m); } }, 10);
    });
    assert.match(timedOut, /^notify: http:\/\/127\.0\.0\.1:\d+\/… failed: no answer within 200 ms \(1 attempt;/);
  } finally {
    await notify.close();
    await server.close();
  }
  // 1 in flight at first + at most 10 queued reach the server, never 1000.
  assert.ok(server.received.length <= 11, `received ${server.received.length}`);
});

test('notify: an endpoint that refuses connections is a notice; unknown event kinds are named at start', async () => {
  const server = await startWebhookServer();
  const url = server.url;
  await server.close();
  const { bus, notices, nextNotice, notify } = setup([{ url, events: ['run-end', 'no-such-event'], retries: 1 }]);
  try {
    assert.match(notices[0]!, /^notify: http:\/\/127\.0\.0\.1:\d+\/…: unknown event kind "no-such-event" ignored \(known: run-start, /);
    bus.emit({ type: 'run-end', reason: 'x' });
    assert.match(await nextNotice(/failed/), /\(2 attempts; notification dropped\)/);
  } finally {
    await notify.close();
  }
});

test('notify: close waits briefly for the last notification (run-end) and then stops', async () => {
  const server = await startWebhookServer();
  const { bus, notify } = setup([{ url: server.url, events: ['run-end'] }]);
  bus.emit({ type: 'run-end', reason: 'bye' });
  await notify.close();
  assert.equal(server.received.length, 1);
  bus.emit({ type: 'run-end', reason: 'after close' });
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(server.received.length, 1, 'nothing after close');
  await server.close();
});

test('notify config: bad URLs and empty event lists are refused with a clear message', () => {
  assert.match(JSON.stringify(notifySchema().safeParse([{ url: 'ftp://x', events: ['run-end'] }]).error?.issues), /http:\/\/ or https:\/\//);
  assert.equal(notifySchema().safeParse([{ url: 'https://ntfy.sh/t', events: [] }]).success, false);
  assert.deepEqual(notifySchema().parse([{ url: 'https://ntfy.sh/t', events: ['run-end'] }]), [{ url: 'https://ntfy.sh/t', events: ['run-end'], timeoutMs: 5000, retries: 3 }]);
});
