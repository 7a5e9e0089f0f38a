import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBus, type Handler } from '../../../src/events/bus';
import type { EventOf, LegionEvent } from '../../../src/events/types';

const fixedNow = () => new Date('2026-01-02T03:04:05.000Z');

test('bus: seq starts at startSeq+1 and grows by one per event; envelope is stamped', () => {
  const bus = createBus({ runId: 'run-1', startSeq: 41, now: fixedNow });
  assert.equal(bus.lastSeq(), 41);
  const a = bus.emit({ type: 'run-start', resumed: true });
  const b = bus.emit({ type: 'notice', level: 'info', message: 'hi' });
  const c = bus.emit({ type: 'run-end', reason: 'done' });
  assert.deepEqual([a.seq, b.seq, c.seq], [42, 43, 44]);
  assert.equal(bus.lastSeq(), 44);
  assert.deepEqual(b, { type: 'notice', level: 'info', message: 'hi', seq: 43, at: '2026-01-02T03:04:05.000Z', runId: 'run-1' });
});

test('bus: seq starts at 1 without startSeq, and lastSeq is 0 before any event', () => {
  const bus = createBus({ runId: 'r' });
  assert.equal(bus.lastSeq(), 0);
  assert.equal(bus.emit({ type: 'run-start', resumed: false }).seq, 1);
  assert.match(bus.emit({ type: 'run-end', reason: 'x' }).at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});

test('bus: an emitter cannot override the envelope', () => {
  const bus = createBus({ runId: 'real', now: fixedNow });
  const input = { type: 'run-end', reason: 'x', seq: 999, runId: 'fake', at: 'never' } as unknown as Parameters<typeof bus.emit>[0];
  const event = bus.emit(input);
  assert.equal(event.seq, 1);
  assert.equal(event.runId, 'real');
  assert.equal(event.at, '2026-01-02T03:04:05.000Z');
});

test('bus: delivers in emission order, to every subscriber in subscription order', () => {
  const bus = createBus({ runId: 'r' });
  const log: string[] = [];
  bus.subscribeAll((e) => log.push(`all:${e.seq}`));
  bus.subscribe('notice', (e) => log.push(`n1:${e.seq}:${e.message}`));
  bus.subscribe('notice', (e) => log.push(`n2:${e.seq}`));
  bus.subscribe('run-end', (e) => log.push(`end:${e.seq}:${e.reason}`));
  bus.emit({ type: 'notice', level: 'warn', message: 'a' });
  bus.emit({ type: 'run-end', reason: 'b' });
  bus.emit({ type: 'notice', level: 'warn', message: 'c' });
  assert.deepEqual(log, ['all:1', 'n1:1:a', 'n2:1', 'all:2', 'end:2:b', 'all:3', 'n1:3:c', 'n2:3']);
});

test('bus: an emit from inside a handler gets the next seq; every subscriber still sees seq order', () => {
  const bus = createBus({ runId: 'r' });
  const first: number[] = [];
  const last: number[] = [];
  const typed: string[] = [];
  let nested: number | undefined;
  // The first catch-all re-emits while the later subscribers have not yet seen event 1.
  bus.subscribeAll((e) => {
    first.push(e.seq);
    if (e.type === 'run-start') nested = bus.emit({ type: 'notice', level: 'info', message: 'nested' }).seq;
  });
  bus.subscribeAll((e) => last.push(e.seq));
  bus.subscribe('notice', (e) => typed.push(`${e.seq}:${e.message}`));
  bus.emit({ type: 'run-start', resumed: false });
  bus.emit({ type: 'run-end', reason: 'x' });
  assert.equal(nested, 2);
  assert.deepEqual(first, [1, 2, 3]);
  assert.deepEqual(last, [1, 2, 3]);
  assert.deepEqual(typed, ['2:nested']);
  assert.equal(bus.lastSeq(), 3);
});

test('bus: subscribe narrows the handler to the event type (compile-time check)', () => {
  const bus = createBus({ runId: 'r' });
  let got: EventOf<'tool-call-end'> | undefined;
  // A handler typed for exactly one event: compiles only if subscribe narrows.
  const handler: Handler<'tool-call-end'> = (e) => {
    const isError: boolean = e.isError; // field only on tool-call-end
    const summary: string = e.summary;
    void isError; void summary;
    got = e;
  };
  bus.subscribe('tool-call-end', handler);
  // @ts-expect-error a tool-call-end handler cannot subscribe to notice events
  bus.subscribe('notice', handler);
  bus.subscribe('notice', (e) => {
    // @ts-expect-error notice events have no isError
    void e.isError;
  });
  bus.emit({ type: 'tool-call-end', sessionId: 's', participantId: 'p', toolUseId: 't', name: 'glob', isError: false, summary: '3 files' });
  assert.equal(got?.summary, '3 files');
  assert.equal(got?.type, 'tool-call-end');
});

test('bus: unsubscribe stops delivery; calling it twice is harmless', () => {
  const bus = createBus({ runId: 'r' });
  const typed: number[] = [];
  const all: number[] = [];
  const offTyped = bus.subscribe('notice', (e) => typed.push(e.seq));
  const offAll = bus.subscribeAll((e) => all.push(e.seq));
  bus.emit({ type: 'notice', level: 'info', message: '1' });
  offTyped();
  offAll();
  offTyped();
  offAll();
  bus.emit({ type: 'notice', level: 'info', message: '2' });
  assert.deepEqual(typed, [1]);
  assert.deepEqual(all, [1]);
});

test('bus: unsubscribing during delivery does not skip others; the removed handler gets nothing after', () => {
  const bus = createBus({ runId: 'r' });
  const log: string[] = [];
  let offB: () => void = () => undefined;
  bus.subscribe('notice', (e) => { log.push(`a${e.seq}`); offB(); });
  offB = bus.subscribe('notice', (e) => log.push(`b${e.seq}`));
  bus.subscribe('notice', (e) => log.push(`c${e.seq}`));
  const offSelf = bus.subscribeAll((e) => { log.push(`self${e.seq}`); offSelf(); });
  bus.emit({ type: 'notice', level: 'info', message: '1' });
  bus.emit({ type: 'notice', level: 'info', message: '2' });
  // Delivery of event 1 uses the subscriber list as it was at emit time.
  assert.deepEqual(log, ['self1', 'a1', 'b1', 'c1', 'a2', 'c2']);
});

test('bus: a handler subscribed during delivery starts with the next event', () => {
  const bus = createBus({ runId: 'r' });
  const late: number[] = [];
  let added = false;
  bus.subscribeAll(() => {
    if (added) return;
    added = true;
    bus.subscribeAll((e) => late.push(e.seq));
  });
  bus.emit({ type: 'run-start', resumed: false });
  bus.emit({ type: 'run-end', reason: 'x' });
  assert.deepEqual(late, [2]);
});

test('bus: a throwing subscriber is reported and breaks neither the emitter nor the others', () => {
  const errors: Array<{ error: unknown; seq: number }> = [];
  const bus = createBus({ runId: 'r', onSubscriberError: (error, event) => errors.push({ error, seq: event.seq }) });
  const log: string[] = [];
  bus.subscribeAll(() => { throw new Error('all boom'); });
  bus.subscribe('notice', () => { throw new Error('typed boom'); });
  bus.subscribe('notice', (e) => log.push(`after:${e.seq}`));
  bus.subscribeAll((e) => log.push(`all2:${e.seq}`));
  const event = bus.emit({ type: 'notice', level: 'error', message: 'x' });
  assert.equal(event.seq, 1);
  bus.emit({ type: 'notice', level: 'error', message: 'y' });
  assert.deepEqual(log, ['all2:1', 'after:1', 'all2:2', 'after:2']);
  assert.deepEqual(errors.map((e) => [(e.error as Error).message, e.seq]), [
    ['all boom', 1], ['typed boom', 1], ['all boom', 2], ['typed boom', 2],
  ]);
});

test('bus: a throwing error reporter, or no reporter at all, still does not break delivery', () => {
  for (const onSubscriberError of [undefined, () => { throw new Error('reporter boom'); }]) {
    const bus = createBus({ runId: 'r', onSubscriberError });
    const got: LegionEvent[] = [];
    bus.subscribeAll(() => { throw 'not even an Error'; });
    bus.subscribeAll((e) => got.push(e));
    assert.doesNotThrow(() => bus.emit({ type: 'run-end', reason: 'x' }));
    assert.equal(got.length, 1);
  }
});

test('bus: catch-all receives every type, typed subscribers only theirs', () => {
  const bus = createBus({ runId: 'r' });
  const all: string[] = [];
  const usage: string[] = [];
  bus.subscribeAll((e) => all.push(e.type));
  bus.subscribe('usage', (e) => usage.push(`${e.model}:${e.inputTokens}`));
  bus.emit({ type: 'run-start', resumed: false });
  bus.emit({ type: 'usage', sessionId: 's', participantId: 'p', model: 'm', inputTokens: 5, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null });
  bus.emit({ type: 'participant-change', participantId: 'x', change: 'added' });
  assert.deepEqual(all, ['run-start', 'usage', 'participant-change']);
  assert.deepEqual(usage, ['m:5']);
});

test('bus: the stamped event is a copy with the input\'s keys in order, then the envelope; the input is left as it was', () => {
  const bus = createBus({ runId: 'run-1', now: fixedNow });
  const input = { type: 'text-delta', sessionId: 's', participantId: 'p', text: 'hi' } as const;
  const event = bus.emit(input);
  assert.notEqual(event, input);
  assert.deepEqual(Object.keys(event), ['type', 'sessionId', 'participantId', 'text', 'seq', 'at', 'runId']);
  assert.deepEqual(Object.keys(input), ['type', 'sessionId', 'participantId', 'text']);
  assert.equal(Object.getPrototypeOf(event), Object.prototype);
});

test('bus: an input with an own __proto__ key (a JSON line that has one) never becomes the event\'s prototype', () => {
  const bus = createBus({ runId: 'real', now: fixedNow });
  const input = JSON.parse('{"type":"tool-call-end","sessionId":"s","participantId":"p","toolUseId":"t","name":"shell","summary":"ok","__proto__":{"isError":true,"failure":"denied","seq":7}}') as Parameters<typeof bus.emit>[0];
  assert.ok(Object.hasOwn(input, '__proto__'), 'JSON.parse makes it an own key');
  const event = bus.emit(input) as unknown as Record<string, unknown>;
  assert.equal(Object.getPrototypeOf(event), Object.prototype, 'the prototype stays Object.prototype');
  assert.equal(event.isError, undefined, 'nothing inherited from the line');
  assert.equal(event.failure, undefined);
  assert.equal(event.seq, 1);
  assert.ok(Object.hasOwn(event, '__proto__'), 'kept as a plain key, as a spread keeps it');
});
