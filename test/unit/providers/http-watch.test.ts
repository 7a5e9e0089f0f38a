import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHttpWatch, defaultBackoffMs, requestedWaitMs, sdkWouldRetry, untilAborted } from '../../../src/providers/http-watch';

test('requested waits: retry-after-ms, retry-after seconds or date', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  assert.equal(requestedWaitMs(new Headers({ 'retry-after-ms': '250' })), 250);
  assert.equal(requestedWaitMs(new Headers({ 'retry-after': '2' })), 2000);
  assert.equal(requestedWaitMs(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }), now), 3000);
  assert.equal(requestedWaitMs(new Headers({ 'retry-after': '0' })), null);
  assert.equal(requestedWaitMs(new Headers({ 'retry-after': 'soon' })), null);
  assert.equal(requestedWaitMs(new Headers()), null);
});

test('default backoff doubles from 0.5 s to at most 8 s with up to 25 % jitter', () => {
  assert.equal(defaultBackoffMs(0, () => 0), 500);
  assert.equal(defaultBackoffMs(1, () => 0), 1000);
  assert.equal(defaultBackoffMs(9, () => 0), 8000);
  assert.equal(defaultBackoffMs(0, () => 1), 375);
});

test('the SDK retry rule', () => {
  for (const s of [408, 409, 429, 500, 503, 529]) assert.equal(sdkWouldRetry(s, new Headers()), true, String(s));
  for (const s of [400, 401, 403, 404, 422]) assert.equal(sdkWouldRetry(s, new Headers()), false, String(s));
  assert.equal(sdkWouldRetry(400, new Headers({ 'x-should-retry': 'true' })), true);
  assert.equal(sdkWouldRetry(529, new Headers({ 'x-should-retry': 'false' })), false);
});

test('a wait of a second or more is shown in the notice; the SDK is told to retry at once', async () => {
  const notices: string[] = [];
  const watch = createHttpWatch({
    vendor: 'anthropic', maxRetries: 2, idleTimeoutMs: 5_000, signal: new AbortController().signal,
    baseFetch: async () => new Response('{}', { status: 529, headers: { 'retry-after': '1' } }),
    onNotice: (_l, m) => notices.push(m),
  });
  const started = performance.now();
  const res = await watch.fetch('http://x/v1/messages', { headers: { 'x-stainless-retry-count': '1' } });
  assert.ok(performance.now() - started >= 990);
  assert.deepEqual(notices, ['anthropic: retrying (2/2) after 529 overloaded, waiting 1 s']);
  assert.equal(res.status, 529);
  assert.equal(res.headers.get('retry-after-ms'), '1');
  assert.equal(res.headers.get('retry-after'), null);
  assert.equal(watch.retries(), 2);
  watch.dispose();
});

test('the last attempt is passed through untouched and unannounced', async () => {
  const notices: string[] = [];
  const watch = createHttpWatch({
    vendor: 'openai', maxRetries: 2, idleTimeoutMs: 5_000, signal: new AbortController().signal,
    baseFetch: async () => new Response('{"error":{}}', { status: 500 }),
    onNotice: (_l, m) => notices.push(m),
  });
  const res = await watch.fetch('http://x', { headers: { 'x-stainless-retry-count': '2' } });
  assert.equal(await res.text(), '{"error":{}}');
  assert.deepEqual(notices, []);
  watch.dispose();
});

test('untilAborted rejects at once on abort and never leaves an unhandled rejection', async () => {
  const controller = new AbortController();
  let rejectLater!: (e: Error) => void;
  const slow = new Promise<number>((_, reject) => (rejectLater = reject));
  const raced = untilAborted(slow, controller.signal);
  controller.abort();
  await assert.rejects(raced, /aborted/);
  rejectLater(new Error('late'));
  assert.equal(await untilAborted(Promise.resolve(7), new AbortController().signal), 7);
});
