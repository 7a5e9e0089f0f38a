import '../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startVendorServer, sse, fixture, type VendorServer } from '../../helpers/vendor-server';
import { collect, request, userText } from '../../helpers/provider-run';
import { createGeminiProvider, SKIP_SIGNATURE } from '../../../src/providers/gemini';
import type { ProviderEvent } from '../../../src/providers/types';
import type { Message } from '../../../src/model/message';

// Gemini through the real `openai` SDK against a local server that speaks the differences of
// Google's OpenAI-compatible endpoint (test/fixtures/vendor/gemini/README.md).

let server: VendorServer;
before(async () => {
  server = await startVendorServer();
});
after(() => server.close());

const provider = () => createGeminiProvider({ apiKey: 'gm-test-key', baseURL: server.geminiURL, maxRetries: 0, idleTimeoutMs: 5_000 });
const last = () => server.requests[server.requests.length - 1]!;
const only = <T extends ProviderEvent['type']>(events: ProviderEvent[], type: T) =>
  events.filter((e): e is Extract<ProviderEvent, { type: T }> => e.type === type);
const at = '2025-01-01T00:00:00.000Z';

test('text: the endpoint path, max_tokens, no stream_options; usage from the finishing chunk, thinking tokens counted as output', async () => {
  server.enqueue(sse(fixture('gemini/text-stream.sse'), { chunkBytes: 13 }));
  const r = await collect(provider(), request({ model: 'gemini-2.5-flash' }));
  assert.equal(r.text, 'Hello from Gemini.');
  assert.deepEqual(only(r.events, 'usage'), [{ type: 'usage', model: 'gemini-2.5-flash', inputTokens: 12, outputTokens: 28, cacheReadTokens: 0, cacheWriteTokens: 0 }]);
  assert.deepEqual(r.last, { type: 'end', stopReason: 'end_turn' });
  assert.equal(last().path, '/v1beta/openai/chat/completions');
  assert.equal(last().headers.authorization, 'Bearer gm-test-key');
  assert.equal(last().body.stream_options, undefined, 'no stream_options');
  assert.equal(last().body.max_tokens, 1024);
  assert.equal(last().body.max_completion_tokens, undefined);
});

test('tool calls without index, finished by "stop": two calls, tool_use; the thought signature goes back with its call', async () => {
  const gemini = provider();
  server.enqueue(sse(fixture('gemini/tool-calls-stream.sse'), { chunkBytes: 17 }));
  const tools = [{ name: 'file_read', description: 'read', inputSchema: { properties: { path: { type: 'string' } } } }, { name: 'file_list', description: 'list', inputSchema: { properties: { path: { type: 'string' } } } }];
  const first = await collect(gemini, request({ model: 'gemini-3-flash-preview', tools }));
  assert.deepEqual(only(first.events, 'tool-call'), [
    { type: 'tool-call', id: 'function-call-11823', name: 'file_read', input: { path: 'README.md' } },
    { type: 'tool-call', id: 'function-call-11824', name: 'file_list', input: { path: 'docs' } },
  ]);
  assert.deepEqual(first.last, { type: 'end', stopReason: 'tool_use' });
  assert.equal(only(first.events, 'usage')[0]?.outputTokens, 179);

  const history: Message[] = [
    userText('look around'),
    { role: 'assistant', at, content: [
      { type: 'tool_use', id: 'function-call-11823', name: 'file_read', input: { path: 'README.md' } },
      { type: 'tool_use', id: 'function-call-11824', name: 'file_list', input: { path: 'docs' } },
    ] },
    { role: 'user', at, content: [
      { type: 'tool_result', toolUseId: 'function-call-11823', content: '# Readme' },
      { type: 'tool_result', toolUseId: 'function-call-11824', content: 'a.md' },
    ] },
  ];
  server.enqueue(sse(fixture('gemini/text-stream.sse')));
  await collect(gemini, request({ model: 'gemini-3-flash-preview', tools, messages: history }));
  const calls = last().body.messages.find((m: { role: string }) => m.role === 'assistant').tool_calls;
  assert.deepEqual(calls[0].extra_content, { google: { thought_signature: 'CiQBcsjafQzL2v0Gm1xwK8pTq9f3Yd1nEo2s7hRk4uVb6c8aWjYSfQ==' } });
  assert.equal(calls[1].extra_content, undefined, 'only the call that had one');
});

test('a history without signatures (another provider, a restart): Gemini 3 gets the documented skip value on each step\'s first call; Gemini 2.5 gets none', async () => {
  const history: Message[] = [
    userText('go'),
    { role: 'assistant', at, content: [{ type: 'tool_use', id: 'toolu_01', name: 'file_read', input: {} }, { type: 'tool_use', id: 'toolu_02', name: 'file_read', input: {} }] },
    { role: 'user', at, content: [{ type: 'tool_result', toolUseId: 'toolu_01', content: 'x' }, { type: 'tool_result', toolUseId: 'toolu_02', content: 'y' }] },
  ];
  for (const [model, expected] of [['gemini-3-pro-preview', { google: { thought_signature: SKIP_SIGNATURE } }], ['gemini-2.5-pro', undefined]] as const) {
    server.enqueue(sse(fixture('gemini/text-stream.sse')));
    await collect(provider(), request({ model, messages: history }));
    const calls = last().body.messages.find((m: { role: string }) => m.role === 'assistant').tool_calls;
    assert.deepEqual(calls[0].extra_content, expected, model);
    assert.equal(calls[1].extra_content, undefined);
  }
});

test('tool calls without ids get ids unique across calls', async () => {
  const noIds = (name: string) => `data: {"choices":[{"delta":{"role":"assistant","tool_calls":[{"function":{"arguments":"{}","name":"${name}"},"type":"function"}]},"finish_reason":"stop","index":0}],"model":"gemini-2.0-flash","object":"chat.completion.chunk"}\n\ndata: [DONE]\n\n`;
  const gemini = provider();
  server.enqueue(sse(noIds('file_read')), sse(noIds('file_list')));
  const a = only((await collect(gemini, request({ model: 'gemini-2.0-flash' }))).events, 'tool-call');
  const b = only((await collect(gemini, request({ model: 'gemini-2.0-flash' }))).events, 'tool-call');
  assert.equal(a.length, 1);
  assert.equal(b.length, 1);
  assert.match(a[0]!.id, /^gemini_call_/);
  assert.notEqual(a[0]!.id, b[0]!.id);
});

test('an error body wrapped in an array: its message reaches the user', async () => {
  server.enqueue({ kind: 'raw', status: 400, contentType: 'application/json', body: fixture('gemini/error-400-array.json') });
  const r = await collect(provider(), request({ model: 'gemini-3-flash-preview' }));
  assert.equal(r.last?.type, 'error');
  assert.match((r.last as { message: string }).message, /^gemini: 400 .*missing a thought_signature/);
});
