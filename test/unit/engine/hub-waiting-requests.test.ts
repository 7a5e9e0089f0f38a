import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventFeed } from '../../../src/engine/event-feed';
import { startEngineHub } from '../../../src/engine/hub';
import { startFeedWorker, TEST_FEED_TOKEN } from '../../helpers/fake-worker-feed';
import type { LegionEvent } from '../../../src/events/types';

/**
 * A request for the user raised on a worker while no hub follows it (a `legion serve` restarted
 * mid-turn, or one that finds a new worker late; docs/engine.md#approvals): the worker's feed
 * keeps it until it is decided and writes it first to a hub that starts following, which takes
 * it once — also when its feed is followed again. Without it the turn waits on an awakeable no
 * front end ever shows.
 */
const until = async (check: () => boolean): Promise<void> => {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), 'in time');
};

let seq = 0;
const request = (requestId: string, sessionId = 's1'): LegionEvent => ({
  type: 'approval-request', requestId, sessionId, participantId: 'builder', chain: ['builder'], toolUseId: `tu-${requestId}`,
  toolName: 'shell', input: { command: 'make' }, ruleId: null, approverId: 'user', seq: ++seq, at: '', runId: 'r1',
}) as LegionEvent;
const resolve = (requestId: string): LegionEvent => ({ type: 'approval-resolve', requestId, decision: 'approved', decidedBy: 'user', reason: '', seq: ++seq, at: '', runId: 'r1' }) as LegionEvent;

function hubOn(admin: string) {
  const requests: string[] = [];
  const remote: string[] = [];
  const hub = startEngineHub({
    ingress: 'http://127.0.0.1:9', admin, runId: 'r1', feedToken: TEST_FEED_TOKEN, pollMs: 20, settledPollMs: 20,
    onEvent: (event) => { if (event.type === 'approval-request') requests.push(event.requestId); },
    onRemoteRequest: (id) => remote.push(id),
  });
  return { hub, requests, remote };
}

test('a request raised while no hub follows reaches the hub that follows later, once, with its awakeable; a decided one does not', { timeout: 30_000 }, async () => {
  const feed = new EventFeed(5);
  const worker = await startFeedWorker(feed);
  try {
    // Raised before any hub: apr-1 waits, apr-2 was decided, apr-3's turn ended (cancelled with it).
    feed.publish(request('apr-1'));
    feed.publishAwakeable('r1', 'apr-1', 'awk_1');
    feed.publish(request('apr-2'));
    feed.publishAwakeable('r1', 'apr-2', 'awk_2');
    feed.publish(resolve('apr-2'));
    feed.publish(request('apr-3', 's3'));
    feed.publishOutcome('r1', 'turn-3', 's3', { kind: 'interrupted' });
    const first = hubOn(worker.admin);
    try {
      await until(() => first.hub.pendingApprovals().length === 1);
      assert.deepEqual(first.hub.pendingApprovals().map((r) => r.requestId), ['apr-1']);
      assert.deepEqual([first.requests, first.remote], [['apr-1'], ['apr-1']]);
      // The feed is lost and followed again: the request is written again and taken once.
      for (const s of worker.streams.splice(0)) s.destroy();
      await until(() => worker.streams.length === 1);
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual([first.requests, first.remote], [['apr-1'], ['apr-1']], 'not shown or decided twice');
      // Decided: a hub that follows from now on does not see it.
      feed.publish(resolve('apr-1'));
      await until(() => first.hub.pendingApprovals().length === 0);
    } finally {
      first.hub.close();
    }
    const second = hubOn(worker.admin);
    try {
      await until(() => worker.streams.length === 2);
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual([second.requests, second.hub.pendingApprovals()], [[], []]);
    } finally {
      second.hub.close();
    }
  } finally {
    await worker.close();
  }
});
