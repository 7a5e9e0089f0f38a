import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { startEngineHub } from '../../../src/engine/hub';
import { readFeedLine } from '../../../src/engine/feed-line';
import { SESSION_OBJECT } from '../../../src/engine/session-object';
import type { EventInput } from '../../../src/events/types';
import { startFakeWorkerFeed, TEST_FEED_TOKEN } from '../../helpers/fake-worker-feed';

/**
 * The hub's reading of a worker's feed (docs/engine.md#streaming-and-the-hub): a line longer than
 * the cap is dropped as it arrives (a hostile feed cannot make the hub hold one without end),
 * lines split across writes and multi-byte characters split across chunks arrive whole, and the
 * shapes readFeedLine takes and refuses.
 */
const until = async (check: () => boolean): Promise<void> => {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), 'in time');
};

test('a feed line past the cap is refused without being held; split lines and characters arrive whole; the feed goes on', async () => {
  const feeds: ServerHttp2Stream[] = [];
  const { server: worker, url } = await startFakeWorkerFeed(feeds);
  const admin = createServer((_req, res) => res.end(JSON.stringify({ deployments: [{ id: 'dp_1', uri: url, services: [{ name: SESSION_OBJECT }] }] })));
  await new Promise<void>((r) => admin.listen(0, '127.0.0.1', r));
  const adminUrl = `http://127.0.0.1:${(admin.address() as AddressInfo).port}`;
  const events: EventInput[] = [];
  const logs: string[] = [];
  const hub = startEngineHub({ ingress: adminUrl, admin: adminUrl, runId: 'r1', feedToken: TEST_FEED_TOKEN, onEvent: (e) => void events.push(e), log: (l) => void logs.push(l), pollMs: 20, maxFeedLineBytes: 2000 });
  try {
    await until(() => feeds.length === 1);
    const feed = feeds[0]!;
    const delta = (text: string): string => JSON.stringify({ runId: 'r1', event: { type: 'text-delta', sessionId: 's1', participantId: 'builder', text } }) + '\n';
    // 10 kB of one line in pieces, never a newline until the end: past the 2 kB cap.
    const long = delta('x'.repeat(10_000));
    for (let at = 0; at < long.length; at += 1000) feed.write(long.slice(at, at + 1000));
    // A line split across writes, a three-byte character split between its bytes.
    const bytes = Buffer.from(delta('snow ☃ man'));
    const cut = bytes.indexOf(Buffer.from('☃')) + 1;
    feed.write(bytes.subarray(0, cut));
    await new Promise((r) => setTimeout(r, 30));
    feed.write(bytes.subarray(cut));
    await until(() => events.length >= 1);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(events.map((e) => e.type === 'text-delta' ? e.text : e.type), ['snow ☃ man'], 'the long line dropped, the next taken whole');
    assert.ok(logs.some((l) => /refused \(a line of 100\d\d bytes\)/.test(l)), logs.join(' | '));
  } finally {
    hub.close();
    for (const f of feeds) f.destroy();
    admin.closeAllConnections();
    await new Promise((r) => admin.close(r));
    await new Promise((r) => worker.close(r));
  }
});

test('readFeedLine: the shapes a worker writes are taken, anything else refused; another run\'s line passed over', () => {
  const ok = (line: unknown): void => assert.equal(readFeedLine(JSON.stringify(line), 'r1').kind, 'line', JSON.stringify(line));
  const refused = (line: unknown, why: RegExp): void => {
    const verdict = readFeedLine(typeof line === 'string' ? line : JSON.stringify(line), 'r1');
    assert.equal(verdict.kind, 'refused', JSON.stringify(line));
    assert.match((verdict as { why: string }).why, why);
  };
  ok({ runId: 'r1', event: { type: 'text-delta', sessionId: 's', participantId: 'p', text: 'hi' } });
  ok({ runId: 'r1', event: { type: 'notice', level: 'info', message: 'm' } });
  ok({ runId: 'r1', awakeable: { requestId: 'apr-1', id: 'awk_1' } });
  ok({ runId: 'r1', invocation: { sessionId: 's', id: 'inv_1' } });
  ok({ runId: 'r1', outcome: { turnId: 't', sessionId: 's', outcome: { kind: 'done' } } });
  assert.equal(readFeedLine(JSON.stringify({ runId: 'r2', event: 'anything' }), 'r1').kind, 'other-run');
  refused('{', /not JSON/);
  refused([1], /not a JSON object/);
  refused({ event: {} }, /no runId/);
  refused({ runId: 'r1' }, /no event/);
  refused({ runId: 'r1', event: { type: 'notice', level: 'info', message: 'm' }, outcome: {} }, /more than one/);
  refused({ runId: 'r1', something: {} }, /unknown line/);
  refused({ runId: 'r1', event: 'text' }, /not an object/);
  refused({ runId: 'r1', event: { type: 'run-start', resumed: false } }, /run-start/);
  refused({ runId: 'r1', event: { type: 'text-delta', sessionId: 's', participantId: 'p', text: 7 } }, /text/);
  refused({ runId: 'r1', event: { type: 'usage', sessionId: 's', participantId: 'p', model: 'm', inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: -1 } }, /costUsd/);
  refused({ runId: 'r1', awakeable: { requestId: 'apr-1', id: '' } }, /awakeable/);
  refused({ runId: 'r1', awakeable: { requestId: 'x'.repeat(1001), id: 'a' } }, /awakeable/);
  refused({ runId: 'r1', invocation: { sessionId: 's' } }, /invocation/);
  refused({ runId: 'r1', outcome: { turnId: 5, sessionId: 's', outcome: {} } }, /outcome/);
  refused(`{"runId":"r1","__proto__":{"event":{"type":"notice","level":"info","message":"m"}}}`, /unknown line/);
});
