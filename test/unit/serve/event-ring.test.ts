import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEventRing } from '../../../src/serve/event-ring';
import { DEFAULT_LIMITS } from '../../../src/serve/server';

const line = (seq: number, size: number): string => `{"event":{"seq":${seq},"t":"${'x'.repeat(Math.max(0, size - 30))}"}}\n`;

test('event ring: bounded by characters, oldest dropped first; `since` within it replays, before it asks for a snapshot', () => {
  const ring = createEventRing({ maxEvents: 1000, maxBytes: 10_000, lastSeq: 0 });
  for (let seq = 1; seq <= 100; seq++) ring.add(seq, line(seq, 500));
  assert.ok(ring.bytes <= 10_000, `${ring.bytes} characters kept`);
  assert.equal(ring.size, Math.floor(10_000 / line(1, 500).length));
  const first = 100 - ring.size + 1;
  assert.deepEqual(ring.after(first - 1), Array.from({ length: ring.size }, (_, i) => line(first + i, 500)));
  assert.deepEqual(ring.after(95), [96, 97, 98, 99, 100].map((s) => line(s, 500)));
  assert.equal(ring.after(100)!.length, 0);
  assert.equal(ring.after(first - 2), null, 'an event after it was dropped: snapshot');
  assert.equal(ring.after(101), null, 'a since in the future: snapshot');
});

test('event ring: bounded by count; a line larger than the bound alone is kept (the client gets it by replay)', () => {
  const ring = createEventRing({ maxEvents: 10, maxBytes: 1_000_000, lastSeq: 5 });
  for (let seq = 6; seq <= 40; seq++) ring.add(seq, line(seq, 50));
  assert.equal(ring.size, 10);
  assert.equal(ring.after(29), null);
  assert.equal(ring.after(30)!.length, 10);
  const small = createEventRing({ maxEvents: 10, maxBytes: 100, lastSeq: 0 });
  small.add(1, line(1, 50));
  small.add(2, line(2, 5000));
  assert.equal(small.size, 1);
  assert.deepEqual(small.after(1), [line(2, 5000)]);
});

test('event ring: 200,000 events through a small ring: the bound holds and the last ones replay', () => {
  const ring = createEventRing({ maxEvents: 20_000, maxBytes: 50_000, lastSeq: 0 });
  for (let seq = 1; seq <= 200_000; seq++) ring.add(seq, line(seq, 100));
  assert.ok(ring.bytes <= 50_000);
  assert.deepEqual(ring.after(199_998), [line(199_999, 100), line(200_000, 100)]);
});

test('the server keeps at most 4 MB of event lines for re-attaching clients (a day of events must not fill its memory)', () => {
  assert.ok(DEFAULT_LIMITS.ringBytes <= 4 * 1024 * 1024, `${DEFAULT_LIMITS.ringBytes}`);
  assert.ok(DEFAULT_LIMITS.ringEvents >= 1000);
});
