import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHttpWatch, defaultBackoffMs, isRetryable, requestedWaitMs } from '../../../src/providers/http-watch';

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

test('the retry rule (x-should-retry wins)', () => {
  for (const s of [408, 409, 429, 500, 503, 529]) assert.equal(isRetryable(s, new Headers()), true, String(s));
  for (const s of [400, 401, 403, 404, 422]) assert.equal(isRetryable(s, new Headers()), false, String(s));
  assert.equal(isRetryable(400, new Headers({ 'x-should-retry': 'true' })), true);
  assert.equal(isRetryable(529, new Headers({ 'x-should-retry': 'false' })), false);
});

test('the watch retries itself (the SDK is built with maxRetries 0): a wait of a second or more is shown in the notice', async () => {
  const notices: string[] = [];
  const statuses = [529, 200];
  const watch = createHttpWatch({
    vendor: 'anthropic', maxRetries: 2, idleTimeoutMs: 5_000, signal: new AbortController().signal,
    baseFetch: async () => new Response('{}', { status: statuses.shift()!, headers: { 'retry-after': '1' } }),
    onNotice: (_l, m) => notices.push(m),
  });
  const started = performance.now();
  const res = await watch.fetch('http://x/v1/messages', { method: 'POST', body: '{}' });
  assert.ok(performance.now() - started >= 990);
  assert.deepEqual(notices, ['anthropic: retrying (1/2) after 529 overloaded, waiting 1 s']);
  assert.equal(res.status, 200);
  assert.deepEqual(statuses, [], 'sent twice');
  assert.equal(watch.retries(), 1);
  watch.dispose();
});

test('the last attempt is passed through untouched and unannounced', async () => {
  const notices: string[] = [];
  let calls = 0;
  const watch = createHttpWatch({
    vendor: 'openai', maxRetries: 2, idleTimeoutMs: 5_000, signal: new AbortController().signal,
    baseFetch: async () => { calls++; return new Response('{"error":{}}', { status: 500, headers: { 'retry-after-ms': '1' } }); },
    onNotice: (_l, m) => notices.push(m),
  });
  const res = await watch.fetch('http://x', { method: 'POST', body: '{}' });
  assert.equal(await res.text(), '{"error":{}}');
  assert.equal(res.headers.get('retry-after-ms'), '1', 'the answer as it came');
  assert.equal(calls, 3);
  assert.deepEqual(notices.map((n) => n.replace(/ after .*/, '')), ['openai: retrying (1/2)', 'openai: retrying (2/2)']);
  watch.dispose();
});

test('a request whose body is a stream is not sent twice; an abort while waiting to retry stops at once', async () => {
  let calls = 0;
  const once = createHttpWatch({
    vendor: 'openai', maxRetries: 2, idleTimeoutMs: 5_000, signal: new AbortController().signal,
    baseFetch: async () => { calls++; return new Response('', { status: 503, headers: { 'retry-after-ms': '1' } }); },
  });
  const res = await once.fetch('http://x', { method: 'POST', body: new ReadableStream(), duplex: 'half' } as RequestInit);
  assert.equal(res.status, 503);
  assert.equal(calls, 1);
  once.dispose();
  const controller = new AbortController();
  const waiting = createHttpWatch({
    vendor: 'anthropic', maxRetries: 2, idleTimeoutMs: 5_000, signal: controller.signal,
    baseFetch: async () => new Response('', { status: 429, headers: { 'retry-after': '30' } }),
  });
  const started = performance.now();
  const pending = waiting.fetch('http://x', { method: 'POST', body: '{}' });
  setTimeout(() => controller.abort(), 50);
  await assert.rejects(pending, (e: Error) => e.name === 'AbortError');
  assert.ok(performance.now() - started < 5_000);
  waiting.dispose();
});
