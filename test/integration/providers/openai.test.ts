import '../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startVendorServer, sse, fixture, json, sseOf, type VendorServer } from '../../helpers/vendor-server';
import { openaiStream } from '../../helpers/vendor-streams';
import { collect, request, terminalEvents, userText } from '../../helpers/provider-run';
import { createOpenAIProvider } from '../../../src/providers/openai';
import { createPricing } from '../../../src/providers/pricing';
import type { ProviderEvent } from '../../../src/providers/types';

let server: VendorServer;
before(async () => {
  server = await startVendorServer();
});
after(() => server.close());

const provider = (over: { maxRetries?: number; idleTimeoutMs?: number } = {}) =>
  createOpenAIProvider({ apiKey: 'sk-test', baseURL: server.openaiURL, maxRetries: over.maxRetries ?? 2, idleTimeoutMs: over.idleTimeoutMs ?? 5_000 });
const req = (over: Parameters<typeof request>[0] = {}) => request({ model: 'gpt-4.1', ...over });
const last = () => server.requests[server.requests.length - 1]!;
const only = <T extends ProviderEvent['type']>(events: ProviderEvent[], type: T) =>
  events.filter((e): e is Extract<ProviderEvent, { type: T }> => e.type === type);

test('text stream (vendor fixture): deltas, include_usage chunk, stop → end_turn', async () => {
  server.enqueue(sse(fixture('openai/text-stream.sse')));
  const r = await collect(provider(), req());
  assert.equal(r.text, "I'm unable to provide real-time weather updates. To get the current weather in San Francisco, I recommend checking a reliable weather website or a weather app.");
  assert.deepEqual(only(r.events, 'usage'), [
    { type: 'usage', model: 'gpt-4o-2024-08-06', inputTokens: 14, outputTokens: 30, cacheReadTokens: 0, cacheWriteTokens: 0 },
  ]);
  assert.deepEqual(r.last, { type: 'end', stopReason: 'end_turn' });
  assert.equal(last().path, '/v1/chat/completions');
  assert.equal(last().headers.authorization, 'Bearer sk-test');
  assert.deepEqual(last().body.stream_options, { include_usage: true });
  assert.equal(last().body.stream, true);
  assert.equal(last().body.max_tokens, 1024, 'a compatible server gets max_tokens');
  assert.equal(last().body.max_completion_tokens, undefined);
});

test('parallel tool calls (vendor fixture) assembled by index, in order', async () => {
  server.enqueue(sse(fixture('openai/tool-calls-stream.sse'), { chunkBytes: 11 }));
  const r = await collect(provider(), req());
  assert.deepEqual(only(r.events, 'tool-call'), [
    { type: 'tool-call', id: 'call_JMW1whyEaYG438VE1OIflxA2', name: 'GetWeatherArgs', input: { city: 'Edinburgh', country: 'GB', units: 'c' } },
    { type: 'tool-call', id: 'call_DNYTawLBoN8fj3KN6qU9N1Ou', name: 'get_stock_price', input: { ticker: 'AAPL', exchange: 'NASDAQ' } },
  ]);
  assert.deepEqual(r.last, { type: 'end', stopReason: 'tool_use' });
  assert.equal(only(r.events, 'usage').length, 1);
});

test('interleaved parallel tool-call deltas are kept apart by index', async () => {
  server.enqueue(
    sse(
      openaiStream({
        toolDeltas: [
          { index: 1, id: 'call_b', name: 'file_read', args: '' },
          { index: 0, id: 'call_a', name: 'file_list', args: '{"pa' },
          { index: 1, args: '{"path":' },
          { index: 0, args: 'th":"src"}' },
          { index: 1, args: ' "a.md"}' },
        ],
      }),
    ),
  );
  const r = await collect(provider(), req());
  assert.deepEqual(
    only(r.events, 'tool-call').map((c) => [c.id, c.name, c.input]),
    [['call_a', 'file_list', { path: 'src' }], ['call_b', 'file_read', { path: 'a.md' }]],
  );
});

test('request translation: system message, tool_calls, role tool results, function tools', async () => {
  server.enqueue(sse(openaiStream({ text: ['ok'] })));
  await collect(
    provider(),
    req({
      system: 'Be brief.',
      tools: [{ name: 'file_read', description: 'Read a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }],
      messages: [
        userText('read two files'),
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Reading.' },
            { type: 'tool_use', id: 'c1', name: 'file_read', input: { path: 'a' } },
            { type: 'tool_use', id: 'c2', name: 'file_read', input: '{"path": broken' },
          ],
          at: '',
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', toolUseId: 'c1', content: 'A' },
            { type: 'tool_result', toolUseId: 'c2', content: 'invalid JSON', isError: true },
            { type: 'text', text: 'and now?' },
          ],
          at: '',
        },
      ],
    }),
  );
  const body = last().body;
  assert.deepEqual(body.messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'read two files' },
    {
      role: 'assistant',
      content: 'Reading.',
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'file_read', arguments: '{"path":"a"}' } },
        { id: 'c2', type: 'function', function: { name: 'file_read', arguments: '{"path": broken' } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'A' },
    { role: 'tool', tool_call_id: 'c2', content: 'Error: invalid JSON' },
    { role: 'user', content: 'and now?' },
  ]);
  assert.deepEqual(body.tools, [
    { type: 'function', function: { name: 'file_read', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } } },
  ]);
});

test('malformed tool arguments become a tool-call with inputError', async () => {
  server.enqueue(sse(openaiStream({ toolDeltas: [{ index: 0, id: 'call_x', name: 'shell', args: '{"command": "ls' }] })));
  const r = await collect(provider(), req());
  const [call] = only(r.events, 'tool-call');
  assert.equal(call!.input, '{"command": "ls');
  assert.match(call!.inputError!, /arguments of shell are not valid JSON/);
  assert.deepEqual(r.last, { type: 'end', stopReason: 'tool_use' });
});

test('cached prompt tokens are cache reads, not input; cost priced', async () => {
  server.enqueue(sse(openaiStream({ text: ['hi'], usage: { prompt: 10_000, completion: 500, cached: 8_000 } })));
  const r = await collect(provider(), req());
  const [u] = only(r.events, 'usage');
  assert.deepEqual(u, { type: 'usage', model: 'gpt-4.1-2025-04-14', inputTokens: 2_000, outputTokens: 500, cacheReadTokens: 8_000, cacheWriteTokens: 0 });
  const pricing = createPricing({ 'gpt-4.1': { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 2 } });
  // 2000×2 + 500×8 + 8000×0.5 = 4000 + 4000 + 4000 per million
  assert.equal(pricing.costOf(u!.model, u!), 0.012);
});

test('finish_reason length → max_tokens; a compatible server reporting stop with tool calls → tool_use', async () => {
  server.enqueue(sse(openaiStream({ text: ['cut'], finishReason: 'length' })));
  assert.deepEqual((await collect(provider(), req())).last, { type: 'end', stopReason: 'max_tokens' });
  server.enqueue(sse(openaiStream({ toolDeltas: [{ index: 0, id: 'c', name: 'list_tools', args: '' }], finishReason: 'stop' })));
  const r = await collect(provider(), req());
  assert.deepEqual(only(r.events, 'tool-call')[0]!.input, {});
  assert.deepEqual(r.last, { type: 'end', stopReason: 'tool_use' });
});

test('unicode split across TCP writes and across deltas', async () => {
  const text = ['Grüße ', '👩‍', '💻 ', '世界'];
  server.enqueue(sse(openaiStream({ text }), { chunkBytes: 3 }));
  const r = await collect(provider(), req());
  assert.equal(r.text, 'Grüße 👩‍💻 世界');
  assert.ok(!r.text.includes('\uFFFD'));
});

test('a stream without usage (server ignores include_usage) still ends', async () => {
  server.enqueue(sse(openaiStream({ text: ['x'], usage: null })));
  const r = await collect(provider(), req());
  assert.deepEqual(r.events.map((e) => e.type), ['text-delta', 'end']);
});

test('429 (vendor body) then success: retry announced', async () => {
  server.enqueue(json(429, JSON.parse(fixture('openai/error-429-rate-limit.json'))), sse(openaiStream({ text: ['ok'] })));
  const r = await collect(provider(), req());
  assert.equal(r.text, 'ok');
  assert.deepEqual(r.notices, ['openai: retrying (1/2) after 429 rate limited']);
});

test('401: the key was rejected, naming OPENAI_API_KEY', async () => {
  server.enqueue(json(401, { error: { message: 'Incorrect API key provided: sk-test.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } }));
  const r = await collect(provider(), req());
  assert.deepEqual(r.events, [
    {
      type: 'error',
      status: 401,
      retryable: false,
      message: 'the API key for openai was rejected: set OPENAI_API_KEY (401 invalid_request_error: Incorrect API key provided: sk-test.)',
    },
  ]);
});

test('an error object inside the stream ends the turn with one error', async () => {
  server.enqueue(
    sse(
      sseOf([
        { data: { id: 'x', object: 'chat.completion.chunk', created: 1, model: 'gpt-4.1', choices: [{ index: 0, delta: { content: 'Hel' }, finish_reason: null }] } },
        { data: { error: { message: 'The server had an error while processing your request.', type: 'server_error' } } },
      ]),
    ),
  );
  const r = await collect(provider(), req());
  assert.equal(r.text, 'Hel');
  assert.deepEqual(terminalEvents(r.events), [r.last]);
  assert.match((r.last as { message: string }).message, /^openai: error in the response stream: server_error: The server had an error/);
});

test('a stream that ends without finish_reason or [DONE] is an error, not a silent end', async () => {
  server.enqueue(sse(openaiStream({ text: ['partial'], finishReason: null, usage: null, done: false })));
  const r = await collect(provider(), req());
  assert.equal(r.text, 'partial');
  assert.deepEqual(r.last, { type: 'error', retryable: true, message: 'openai: the response stream ended before the reply was complete' });
});

test('abort mid-stream returns at once and closes the HTTP stream', async () => {
  server.enqueue(sse(openaiStream({ text: Array.from({ length: 2_000 }, (_, i) => `w${i} `) }), { chunkBytes: 64, chunkDelayMs: 5 }));
  const controller = new AbortController();
  let abortedAt = 0;
  const r = await collect(provider(), req(), controller.signal, (e) => {
    if (e.type === 'text-delta' && abortedAt === 0) {
      abortedAt = performance.now();
      controller.abort();
    }
  });
  const lag = performance.now() - abortedAt;
  // The rest of the stream would take over 5 s; 3 s proves the abort ended it, and a loaded machine stays within it.
  assert.ok(lag < 3_000, `returned ${lag} ms after abort`);
  assert.deepEqual(r.last, { type: 'error', message: 'aborted', retryable: false });
  await last().done; // event-driven: the server's response closes when the client hangs up (the test's timeout is the bound)
  assert.equal(last().clientClosedEarly, true);
});
