import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createBus } from '../../../src/events/bus';
import { attachLedger, readLedger } from '../../../src/events/ledger';
import { createDeltaCoalescer } from '../../../src/events/coalesce';
import type { LegionEvent } from '../../../src/events/types';
import { withTempDir } from '../../helpers/tmp';

const delta = (sessionId: string, text: string) => ({ type: 'text-delta' as const, sessionId, participantId: 'a', text });

test('ledger: a session\'s text deltas become one line (joined text, seq of the last, joined count); the bus still delivers each', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'events.jsonl');
    const bus = createBus({ runId: 'r' });
    const ledger = attachLedger(bus, path, { coalesceMs: 60_000 });
    const seen: LegionEvent[] = [];
    bus.subscribe('text-delta', (e) => void seen.push(e));
    bus.emit({ type: 'run-start', resumed: false }); // seq 1
    for (const c of 'Hello') bus.emit(delta('s1', c)); // seq 2..6
    bus.emit(delta('s2', 'x')); // seq 7
    bus.emit(delta('s1', '!')); // seq 8
    assert.equal(seen.length, 7, 'every delta reached the subscribers');
    assert.equal((await readFile(path, 'utf8')).split('\n').length, 2, 'only run-start is written yet');
    // Any other event writes the waiting deltas first (lines in seq order), then itself.
    bus.emit({ type: 'notice', level: 'info', message: 'between' }); // seq 9
    for (const c of 'ab') bus.emit(delta('s2', c)); // seq 10, 11
    ledger.close(); // flushes
    const { events, issues } = await readLedger(path);
    assert.deepEqual(issues, []);
    assert.deepEqual(events.map((e) => [e.seq, e.type, e.type === 'text-delta' ? `${e.sessionId}:${e.text}:${e.joined ?? 1}` : '']), [
      [1, 'run-start', ''],
      [7, 'text-delta', 's2:x:1'],
      [8, 'text-delta', 's1:Hello!:6'],
      [9, 'notice', ''],
      [11, 'text-delta', 's2:ab:2'],
    ]);
    assert.equal(events.reduce((n, e) => n + (e.type === 'text-delta' ? e.joined ?? 1 : 1), 0), 11, 'every seq is accounted for');
    // Nothing after close.
    bus.emit(delta('s1', 'late'));
    assert.equal((await readLedger(path)).events.length, 5);
  });
});

test('ledger: the window ends by itself — waiting deltas are written without another event', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'events.jsonl');
    const bus = createBus({ runId: 'r' });
    const ledger = attachLedger(bus, path, { coalesceMs: 20 });
    for (const c of 'abc') bus.emit(delta('s', c));
    // Event-driven wait: poll the file (safety net 5 s), no assertion on time.
    let text = '';
    for (let i = 0; i < 500 && !text.includes('"abc"'); i++) {
      await new Promise((r) => setTimeout(r, 10));
      text = await readFile(path, 'utf8');
    }
    assert.match(text, /"text":"abc"/);
    assert.equal(text.trim().split('\n').length, 1);
    ledger.close();
  });
});

test('ledger: coalesceMs 0 writes every delta as its own line', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'events.jsonl');
    const bus = createBus({ runId: 'r' });
    const ledger = attachLedger(bus, path, { coalesceMs: 0 });
    for (const c of 'abc') bus.emit(delta('s', c));
    assert.equal((await readFile(path, 'utf8')).trim().split('\n').length, 3, 'written synchronously');
    ledger.close();
  });
});

test('coalescer: a write failing in the timer is thrown by the next push (inside the bus, which reports it)', async () => {
  const written: string[] = [];
  let fail = true;
  const coalescer = createDeltaCoalescer((e) => {
    if (fail && e.type === 'text-delta') throw new Error('disk full');
    written.push(e.type);
  }, 5);
  const errors: unknown[] = [];
  const reporting = createBus({ runId: 'r', onSubscriberError: (error) => errors.push(error) });
  reporting.subscribeAll((e) => coalescer.push(e));
  reporting.emit(delta('s', 'a'));
  await new Promise((r) => setTimeout(r, 50));
  fail = false;
  reporting.emit({ type: 'notice', level: 'info', message: 'next' });
  assert.equal(errors.length, 1);
  assert.match(String(errors[0]), /disk full/);
  assert.deepEqual(written, ['notice'], 'the next event is still written');
  coalescer.close();
});

test('coalescer with writeAll: what one flush writes goes out at once — the window\'s lines in seq order, or the waiting lines with the event that flushed them', async () => {
  const writes: string[][] = [];
  const single: string[] = [];
  const describe = (e: LegionEvent): string => (e.type === 'text-delta' ? `${e.sessionId}:${e.text}` : e.type);
  const coalescer = createDeltaCoalescer((e) => single.push(describe(e)), 5, (events) => writes.push(events.map(describe)));
  const bus = createBus({ runId: 'r' });
  bus.subscribeAll((e) => coalescer.push(e));
  for (const session of ['s1', 's2', 's3']) bus.emit(delta(session, session === 's2' ? 'b' : 'a'));
  bus.emit(delta('s1', 'c'));
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(writes, [['s2:b', 's3:a', 's1:ac']], 'one write for the window, its lines in the order of their last seq');
  bus.emit(delta('s2', 'd'));
  bus.emit({ type: 'notice', level: 'info', message: 'next' });
  assert.deepEqual(writes.slice(1), [['s2:d', 'notice']], 'the waiting line and the event after it: one write');
  bus.emit({ type: 'notice', level: 'info', message: 'alone' });
  assert.deepEqual(writes.slice(2), [['notice']]);
  assert.deepEqual(single, [], 'write is not called once writeAll is given');
  coalescer.close();
});
