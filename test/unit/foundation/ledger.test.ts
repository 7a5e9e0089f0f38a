import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createBus } from '../../../src/events/bus';
import { attachLedger, readLedger } from '../../../src/events/ledger';
import { layoutFor } from '../../../src/storage/layout';
import { withTempDir } from '../../helpers/tmp';

test('ledger: every event is appended, in seq order, to runs/<runId>/events.jsonl (dirs created)', async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    const bus = createBus({ runId: 'run-a', startSeq: 10 });
    const ledger = attachLedger(bus, layout.events('run-a'));
    bus.emit({ type: 'run-start', resumed: true });
    bus.emit({ type: 'message-add', sessionId: 's', message: { role: 'user', content: [{ type: 'text', text: 'hi\nthere' }], at: 'now' } });
    bus.emit({ type: 'run-end', reason: 'quit' });
    // Written synchronously: visible before close.
    const text = await readFile(join(dir, '.legion', 'runs', 'run-a', 'events.jsonl'), 'utf8');
    assert.equal(text.split('\n').length, 4);
    assert.ok(text.endsWith('\n'));
    ledger.close();
    const { events, issues } = await readLedger(layout.events('run-a'));
    assert.deepEqual(issues, []);
    assert.deepEqual(events.map((e) => [e.seq, e.type]), [[11, 'run-start'], [12, 'message-add'], [13, 'run-end']]);
    const msg = events[1]!;
    assert.equal(msg.type === 'message-add' && msg.message.content[0]!.type === 'text' && msg.message.content[0].text, 'hi\nthere');
    assert.equal(events[0]!.runId, 'run-a');
  });
});

test('ledger: close stops recording, is idempotent, and a later ledger appends to the same file', async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, 'events.jsonl');
    const bus = createBus({ runId: 'r' });
    const first = attachLedger(bus, path);
    bus.emit({ type: 'run-start', resumed: false });
    first.close();
    first.close();
    bus.emit({ type: 'notice', level: 'info', message: 'unrecorded' });
    // A resumed run continues the same ledger.
    const resumed = createBus({ runId: 'r', startSeq: bus.lastSeq() });
    const second = attachLedger(resumed, path);
    resumed.emit({ type: 'run-start', resumed: true });
    second.close();
    const { events } = await readLedger(path);
    assert.deepEqual(events.map((e) => `${e.seq}:${e.type}`), ['1:run-start', '3:run-start']);
  });
});

test('ledger: a write failure is reported by the bus and does not break the emitter', async () => {
  await withTempDir(async (dir) => {
    const errors: unknown[] = [];
    const bus = createBus({ runId: 'r', onSubscriberError: (e) => errors.push(e) });
    const seen: number[] = [];
    const ledger = attachLedger(bus, join(dir, 'events.jsonl'));
    bus.subscribeAll((e) => seen.push(e.seq));
    // A value JSON cannot encode makes the append throw inside the subscriber.
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    assert.doesNotThrow(() => bus.emit({ type: 'tool-call-start', sessionId: 's', participantId: 'p', toolUseId: 't', name: 'x', input: cyclic }));
    bus.emit({ type: 'run-end', reason: 'x' });
    ledger.close();
    assert.equal(errors.length, 1);
    assert.deepEqual(seen, [1, 2]);
    const { events } = await readLedger(join(dir, 'events.jsonl'));
    assert.deepEqual(events.map((e) => e.seq), [2]);
  });
});

test('readLedger: missing file is empty; torn tail dropped and reported; bad lines named with their line', async () => {
  await withTempDir(async (dir) => {
    assert.deepEqual(await readLedger(join(dir, 'none.jsonl')), { events: [], issues: [] });
    const path = join(dir, 'events.jsonl');
    const ok = (seq: number) => JSON.stringify({ seq, at: 'x', runId: 'r', type: 'run-end', reason: 'z' });
    await writeFile(path, [
      ok(1),
      JSON.stringify({ seq: 2, at: 'x', runId: 'r', type: 'no-such-event' }),
      JSON.stringify({ hello: 'world' }),
      ok(4),
    ].join('\n') + '\n');
    await appendFile(path, '{"seq":5,"at":"x","ru');
    const { events, issues } = await readLedger(path);
    assert.deepEqual(events.map((e) => e.seq), [1, 4]);
    assert.deepEqual(issues.map((i) => [i.line, i.kind]), [[2, 'invalid'], [3, 'invalid'], [5, 'torn']]);
    assert.match(issues[0]!.message, /events\.jsonl:2: type/);
  });
});
