import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerHttp2Stream } from 'node:http2';
import { EventFeed, type FeedLine } from '../../../src/engine/event-feed';
import type { LegionEvent } from '../../../src/events/types';

/** A feed followed by a fake hub stream: each write the hub would receive, as its lines. */
function followed(feed: EventFeed): FeedLine[][] {
  const writes: FeedLine[][] = [];
  const stream = {
    destroyed: false,
    respond: () => undefined,
    once: () => undefined,
    write: (text: string) => {
      const lines = text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as FeedLine);
      if (lines.length > 0) writes.push(lines);
      return true;
    },
  } as unknown as ServerHttp2Stream;
  feed.follow(stream, {});
  return writes;
}

let seq = 0;
const delta = (text: string): LegionEvent => ({ type: 'text-delta', sessionId: 's1', participantId: 'builder', text, seq: ++seq, at: '', runId: 'r1' }) as unknown as LegionEvent;
const status = (): LegionEvent => ({ type: 'agent-status', participantId: 'builder', status: 'idle', seq: ++seq, at: '', runId: 'r1' }) as unknown as LegionEvent;
const textOf = (line: FeedLine): string => ('event' in line ? `${line.event.type}${line.event.type === 'text-delta' ? ` ${line.event.text}` : ''}` : Object.keys(line).filter((k) => k !== 'runId').join());

const endOfTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

test('text deltas of one window go out in one write; any other line sends the deltas before it at the end of the loop\'s turn, in order', async () => {
  const feed = new EventFeed(30);
  const writes = followed(feed);
  feed.publish(delta('a'));
  feed.publish(delta('b'));
  feed.publish(delta('c'));
  await endOfTurn();
  assert.equal(writes.length, 0, 'the deltas wait for their window');
  await new Promise((r) => setTimeout(r, 80));
  assert.deepEqual(writes.map((w) => w.map(textOf)), [['text-delta a', 'text-delta b', 'text-delta c']]);
  feed.publish(delta('d'));
  feed.publish(status());
  feed.publishInvocation('r1', 's1', 'inv_1');
  await endOfTurn();
  assert.deepEqual(writes.slice(1).map((w) => w.map(textOf)), [['text-delta d', 'agent-status', 'invocation']], 'not held for the window: one write, after the delta before them');
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(writes.length, 2, 'nothing left waiting');
});

test('lines published in one turn of the event loop leave in one write; a later turn\'s in the next', async () => {
  const feed = new EventFeed(30);
  const writes = followed(feed);
  feed.publish(status());
  feed.publishInvocation('r1', 's1', 'inv_1');
  await Promise.resolve(); // a promise's continuation is still the same turn
  feed.publishOutcome('r1', 'turn-1', 's1', { kind: 'done', text: 'ok' });
  assert.equal(writes.length, 0, 'nothing written while the turn runs');
  await endOfTurn();
  assert.deepEqual(writes.map((w) => w.map(textOf)), [['agent-status', 'invocation', 'outcome']]);
  feed.publish(status());
  await endOfTurn();
  assert.deepEqual(writes.slice(1).map((w) => w.map(textOf)), [['agent-status']]);
});

test('a turn\'s outcome goes out at the end of the loop\'s turn with its turn id; nothing is sent or kept while no hub follows', async () => {
  const feed = new EventFeed(30);
  feed.publish(delta('lost'));
  feed.publishOutcome('r1', 'turn-1', 's1', { kind: 'done', text: 'no one hears this' });
  const writes = followed(feed);
  feed.publishOutcome('r1', 'turn-2', 's1', { kind: 'done', text: 'ok' });
  await endOfTurn();
  assert.deepEqual(writes, [[{ runId: 'r1', outcome: { turnId: 'turn-2', sessionId: 's1', outcome: { kind: 'done', text: 'ok' } } }]]);
});

test('a steady stream of deltas is not held back: each goes out within its window, not after the stream pauses', async () => {
  const feed = new EventFeed(30);
  let published = 0;
  // For each delta: how many deltas were published after it by the time it went out. Counted
  // in publishes, not milliseconds, so a loaded machine cannot fail it: the publisher sleeps 5 ms
  // between deltas, so 7 publishes are at least 35 ms, past the 30 ms window (timers fire in the
  // order they are due, so the window's flush comes before the publisher's later sleeps end).
  const lags: number[] = [];
  const stream = {
    destroyed: false,
    respond: () => undefined,
    once: () => undefined,
    write: (text: string) => {
      for (const line of text.split('\n').filter(Boolean)) {
        const parsed = JSON.parse(line) as FeedLine;
        if ('event' in parsed && parsed.event.type === 'text-delta') lags.push(published - 1 - Number(parsed.event.text.slice(1)));
      }
      return true;
    },
  } as unknown as ServerHttp2Stream;
  feed.follow(stream, {});
  // A delta every 5 ms (at least) for 60 deltas: a window restarted by each delta would hold them all until the end.
  for (let i = 0; i < 60; i++) {
    feed.publish(delta(`d${i}`));
    published += 1;
    await new Promise((r) => setTimeout(r, 5));
  }
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(lags.length, 60, 'every delta went out');
  assert.ok(Math.max(...lags) < 12, `a delta went out only after ${Math.max(...lags)} more were published (window 30 ms, a delta every 5 ms or more)`);
});

test('a request for the user is serialized once: the line written live is the one kept for a hub that follows later', async () => {
  const feed = new EventFeed(30);
  const live = followed(feed);
  const request = {
    type: 'approval-request', requestId: 'apr-1', sessionId: 's1', participantId: 'builder', chain: ['builder'], toolUseId: 'tu-1',
    toolName: 'shell', input: { command: 'make' }, ruleId: null, approverId: 'user', seq: ++seq, at: '', runId: 'r1',
  } as unknown as LegionEvent;
  const stringify = JSON.stringify;
  let calls = 0;
  JSON.stringify = ((...args: Parameters<typeof stringify>) => {
    calls += 1;
    return stringify(...args);
  }) as typeof JSON.stringify;
  try {
    feed.publish(request);
    feed.publishAwakeable('r1', 'apr-1', 'awk_1');
  } finally {
    JSON.stringify = stringify;
  }
  assert.equal(calls, 2, 'one serialization for the request line, one for its awakeable\'s');
  await endOfTurn();
  const later = followed(feed);
  assert.deepEqual(later[0], live[0], 'a hub following later gets the same lines');
  assert.deepEqual(live[0]!.map(textOf), ['approval-request', 'awakeable']);
});
