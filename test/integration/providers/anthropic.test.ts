import '../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startVendorServer, sse, fixture, json, type VendorServer } from '../../helpers/vendor-server';
import { anthropicStream } from '../../helpers/vendor-streams';
import { collect, request, terminalEvents, userText } from '../../helpers/provider-run';
import { createAnthropicProvider } from '../../../src/providers/anthropic';
import { createPricing } from '../../../src/providers/pricing';
import type { ProviderEvent } from '../../../src/providers/types';

let server: VendorServer;
before(async () => {
  server = await startVendorServer();
});
after(() => server.close());

const provider = (over: { maxRetries?: number; idleTimeoutMs?: number } = {}) =>
  createAnthropicProvider({ apiKey: 'sk-ant-test', baseURL: server.anthropicURL, maxRetries: over.maxRetries ?? 2, idleTimeoutMs: over.idleTimeoutMs ?? 5_000 });

const last = () => server.requests[server.requests.length - 1]!;
const only = <T extends ProviderEvent['type']>(events: ProviderEvent[], type: T) =>
  events.filter((e): e is Extract<ProviderEvent, { type: T }> => e.type === type);

test('text stream (vendor fixture): deltas, usage from message_start + message_delta, end_turn', async () => {
  server.enqueue(sse(fixture('anthropic/text-stream.sse')));
  const r = await collect(provider(), request());
  assert.equal(r.text, 'Hello!');
  assert.deepEqual(only(r.events, 'usage'), [
    { type: 'usage', model: 'claude-sonnet-4-5-20250929', inputTokens: 25, outputTokens: 15, cacheReadTokens: 0, cacheWriteTokens: 0 },
  ]);
  assert.deepEqual(r.last, { type: 'end', stopReason: 'end_turn' });
  assert.equal(terminalEvents(r.events).length, 1);
  assert.deepEqual(r.notices, []);
  assert.equal(last().path, '/v1/messages');
  // @anthropic-ai/sdk 1.x sends the key as a bearer token.
  assert.equal(last().headers.authorization, 'Bearer sk-ant-test');
});

test('request translation: snake_case, system and last tool and last block cached', async () => {
  server.enqueue(sse(fixture('anthropic/text-stream.sse')));
  await collect(
    provider(),
    request({
      system: 'Be brief.',
      maxTokens: 321,
      tools: [
        { name: 'file_read', description: 'Read a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
        { name: 'file_list', description: 'List files', inputSchema: { properties: {} } },
      ],
      messages: [
        userText('list please'),
        { role: 'assistant', content: [{ type: 'text', text: 'Sure.' }, { type: 'tool_use', id: 'toolu_1', name: 'file_list', input: {} }], at: '' },
        { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_1', content: 'denied', isError: true }, { type: 'text', text: '' }], at: '' },
      ],
    }),
  );
  const body = last().body;
  assert.equal(body.max_tokens, 321);
  assert.equal(body.stream, true);
  assert.deepEqual(body.system, [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
  assert.equal(body.tools[0].cache_control, undefined);
  assert.deepEqual(body.tools[1], { name: 'file_list', description: 'List files', input_schema: { type: 'object', properties: {} }, cache_control: { type: 'ephemeral' } });
  assert.deepEqual(body.tools[0].input_schema.required, ['path']);
  assert.deepEqual(body.messages[1], {
    role: 'assistant',
    content: [{ type: 'text', text: 'Sure.' }, { type: 'tool_use', id: 'toolu_1', name: 'file_list', input: {} }],
  });
  assert.deepEqual(body.messages[2], {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'denied', is_error: true, cache_control: { type: 'ephemeral' } }],
  }, 'empty text dropped, last block cached');
});

test('tool use (vendor fixture): input assembled from input_json_delta fragments', async () => {
  server.enqueue(sse(fixture('anthropic/tool-use-stream.sse'), { chunkBytes: 5 }));
  const r = await collect(provider(), request());
  assert.equal(r.text, "Okay, let's check the weather for San Francisco, CA:");
  assert.deepEqual(only(r.events, 'tool-call'), [
    { type: 'tool-call', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', input: { location: 'San Francisco, CA', unit: 'fahrenheit' } },
  ]);
  assert.deepEqual(r.last, { type: 'end', stopReason: 'tool_use' });
  assert.equal(only(r.events, 'usage')[0]!.outputTokens, 89);
});

test('thinking blocks (vendor fixture) are dropped; the text stays', async () => {
  server.enqueue(sse(fixture('anthropic/thinking-stream.sse')));
  const r = await collect(provider(), request());
  assert.equal(r.text, '27 * 453 = 12,231');
  assert.ok(!r.events.some((e) => e.type === 'text-delta' && /prime|multiply|453 = 400/i.test(e.text)));
  assert.deepEqual(r.last, { type: 'end', stopReason: 'end_turn' });
});

test('malformed tool JSON becomes a tool-call with inputError (never a crash)', async () => {
  server.enqueue(sse(anthropicStream({ tool: { name: 'file_write', json: ['{"path": "a.md", ', '"content": "x'] } })));
  const r = await collect(provider(), request());
  const [call] = only(r.events, 'tool-call');
  assert.equal(call!.input, '{"path": "a.md", "content": "x');
  assert.match(call!.inputError!, /arguments of file_write are not valid JSON/);
  assert.deepEqual(r.last, { type: 'end', stopReason: 'tool_use' });
});

test('a tool without arguments gets {}', async () => {
  server.enqueue(sse(anthropicStream({ tool: { name: 'list_participants', json: [''] } })));
  const r = await collect(provider(), request());
  assert.deepEqual(only(r.events, 'tool-call')[0]!.input, {});
});

test('unicode: multi-byte characters split across TCP writes and emoji split across deltas', async () => {
  const text = ['Grüße ', '👩‍', '💻 ', '世界 ', 'e\u0301', '🇫', '🇷'];
  // 3-byte writes always split every 4-byte emoji (one of its 3 inner boundaries is a multiple of 3).
  server.enqueue(sse(anthropicStream({ text }), { chunkBytes: 3 }));
  const r = await collect(provider(), request());
  assert.equal(r.text, 'Grüße 👩‍💻 世界 e\u0301🇫🇷');
  assert.ok(!r.text.includes('\uFFFD'), 'no replacement characters');
  assert.equal(only(r.events, 'text-delta').length, text.length);
});

test('usage with cache reads and writes, priced', async () => {
  server.enqueue(sse(anthropicStream({ text: ['ok'], usage: { input: 100, output: 50, cacheRead: 2_000, cacheWrite: 1_000 } })));
  const r = await collect(provider(), request());
  const [u] = only(r.events, 'usage');
  assert.deepEqual(u, { type: 'usage', model: 'claude-sonnet-4-5-20250929', inputTokens: 100, outputTokens: 50, cacheReadTokens: 2_000, cacheWriteTokens: 1_000 });
  const pricing = createPricing({ 'claude-sonnet-4-5': { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } });
  // 100×3 + 50×15 + 2000×0.3 + 1000×3.75 = 300 + 750 + 600 + 3750 = 5400 per million
  assert.equal(pricing.costOf(u!.model, u!), 0.0054);
});

test('overloaded error mid-stream (vendor fixture): the text so far, usage, one error', async () => {
  server.enqueue(sse(fixture('anthropic/error-overloaded-midstream.sse')));
  const r = await collect(provider(), request());
  assert.equal(r.text, 'Hello');
  assert.deepEqual(terminalEvents(r.events), [r.last]);
  assert.equal(r.last?.type, 'error');
  assert.match((r.last as { message: string }).message, /^anthropic: error in the response stream: overloaded_error: Overloaded$/);
  assert.equal((r.last as { retryable?: boolean }).retryable, true);
  assert.equal(only(r.events, 'usage').length, 1, 'billed tokens are still reported');
});

test('a stream whose only event is an error (vendor fixture)', async () => {
  server.enqueue(sse(fixture('anthropic/error-overloaded.sse')));
  const r = await collect(provider(), request());
  assert.deepEqual(r.events.map((e) => e.type), ['error']);
});

test('429 (vendor body) then success: one retry, announced', async () => {
  server.enqueue(json(429, JSON.parse(fixture('anthropic/error-429-rate-limit.json'))), sse(fixture('anthropic/text-stream.sse')));
  const before = server.requests.length;
  const r = await collect(provider(), request());
  assert.equal(r.text, 'Hello!');
  assert.deepEqual(r.notices, ['anthropic: retrying (1/2) after 429 rate limited']);
  assert.equal(server.requests.length - before, 2);
  // The SDK never retries (maxRetries 0): the second request is the watch's own.
  assert.deepEqual(server.requests.slice(before).map((r) => r.headers['x-stainless-retry-count']), ['0', '0']);
});

test('529 body (vendor fixture) until retries run out: one error naming status and type', async () => {
  const body = JSON.parse(fixture('anthropic/error-529-overloaded.json'));
  server.enqueue(json(529, body), json(529, body), json(529, body));
  const r = await collect(provider(), request());
  assert.deepEqual(r.notices, ['anthropic: retrying (1/2) after 529 overloaded', 'anthropic: retrying (2/2) after 529 overloaded']);
  assert.deepEqual(r.events, [
    { type: 'error', status: 529, retryable: true, message: 'anthropic: 529 overloaded_error: Overloaded (gave up after 2 retries)' },
  ]);
});

test('401: the key was rejected, no retry', async () => {
  server.enqueue(json(401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }));
  const before = server.requests.length;
  const r = await collect(provider(), request());
  assert.equal(server.requests.length - before, 1);
  assert.deepEqual(r.notices, []);
  assert.deepEqual(r.events, [
    { type: 'error', status: 401, retryable: false, message: 'the API key for anthropic was rejected: set ANTHROPIC_API_KEY (401 authentication_error: invalid x-api-key)' },
  ]);
});

test('403 is reported like 401', async () => {
  server.enqueue(json(403, { type: 'error', error: { type: 'permission_error', message: 'no access' } }));
  const r = await collect(provider(), request());
  assert.match((r.last as { message: string }).message, /^the API key for anthropic was rejected: set ANTHROPIC_API_KEY \(403/);
});

test('400 is not retried and shows the API message', async () => {
  server.enqueue(json(400, { type: 'error', error: { type: 'invalid_request_error', message: 'messages: text content blocks must be non-empty' } }));
  const r = await collect(provider(), request());
  assert.deepEqual(r.events, [
    { type: 'error', status: 400, retryable: false, message: 'anthropic: 400 invalid_request_error: messages: text content blocks must be non-empty' },
  ]);
});

test('abort mid-stream returns at once and closes the HTTP stream', async () => {
  server.enqueue(sse(anthropicStream({ text: Array.from({ length: 2_000 }, (_, i) => `w${i} `) }), { chunkBytes: 64, chunkDelayMs: 5 }));
  const controller = new AbortController();
  let abortedAt = 0;
  const r = await collect(provider(), request(), controller.signal, (e) => {
    if (e.type === 'text-delta' && abortedAt === 0) {
      abortedAt = performance.now();
      controller.abort();
    }
  });
  const lag = performance.now() - abortedAt;
  // The rest of the stream would take over 5 s; 3 s proves the abort ended it, and a loaded machine stays within it.
  assert.ok(lag < 3_000, `returned ${lag} ms after abort`);
  assert.deepEqual(r.last, { type: 'error', message: 'aborted', retryable: false });
  assert.equal(terminalEvents(r.events).length, 1);
  const req = last();
  await req.done; // event-driven: the server's response closes when the client hangs up (the test's timeout is the bound)
  assert.equal(req.clientClosedEarly, true, 'the server saw the connection close before the response ended');
});

test('never throws: an unreachable server is an error event', async () => {
  const dead = await startVendorServer();
  const url = dead.anthropicURL;
  await dead.close();
  const p = createAnthropicProvider({ apiKey: 'k', baseURL: url, maxRetries: 0, idleTimeoutMs: 2_000 });
  const r = await collect(p, request());
  assert.equal(r.events.length, 1);
  assert.match((r.last as { message: string }).message, /^anthropic: cannot connect \(.*ECONNREFUSED.*\)$/);
});

test('a deprecated model is reported once as a notice, never printed to the console', async () => {
  const writes: string[] = [];
  const original = process.stderr.write.bind(process.stderr);
  const p = provider();
  server.enqueue(sse(fixture('anthropic/text-stream.sse')), sse(fixture('anthropic/text-stream.sse')));
  process.stderr.write = ((chunk: string | Uint8Array) => {
    writes.push(String(chunk));
    return true;
  }) as typeof process.stderr.write;
  let first, second;
  try {
    first = await collect(p, request({ model: 'claude-sonnet-4-5' }));
    second = await collect(p, request({ model: 'claude-sonnet-4-5' }));
  } finally {
    process.stderr.write = original;
  }
  assert.deepEqual(writes.filter((w) => /deprecated/.test(w)), []);
  // @anthropic-ai/sdk 1.12.0 lists claude-sonnet-4-5 as deprecated and warns on every call.
  assert.deepEqual(
    [...first.notices, ...second.notices],
    ["anthropic: The model 'claude-sonnet-4-5' is deprecated and will reach end-of-life on November 30th, 2026"],
  );
});
