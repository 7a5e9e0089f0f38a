import '../../helpers/own-home';
import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { startVendorServer, sse, json, type ScriptedResponse, type VendorServer } from '../../helpers/vendor-server';
import { anthropicStream, openaiStream } from '../../helpers/vendor-streams';
import { collect, request, terminalEvents } from '../../helpers/provider-run';
import { createAnthropicProvider } from '../../../src/providers/anthropic';
import { createOpenAIProvider } from '../../../src/providers/openai';
import { idleMessage } from '../../../src/providers/failure';
import type { Provider, ProviderEvent } from '../../../src/providers/types';
import { until } from '../../helpers/processes';

/**
 * Provider faults (issue 9), the same matrix for both vendors through their real SDKs: each
 * ends with exactly one readable event, in bounded time, and never throws.
 */
// A fresh server per test: each test scripts exactly the responses it uses, and a request a
// previous test abandoned (an idle timeout under load) can never take another test's response.
let server: VendorServer;
beforeEach(async () => {
  server = await startVendorServer();
});
afterEach(() => server.close());

interface Vendor {
  readonly id: 'anthropic' | 'openai';
  readonly keyVar: string;
  readonly overloadStatus: number;
  make(opts?: { maxRetries?: number; idleTimeoutMs?: number }): Provider;
  text(parts: readonly string[]): string;
  tool(name: string, json: readonly string[]): string;
  errorBody(status: number): unknown;
}

const vendors: Vendor[] = [
  {
    id: 'anthropic',
    keyVar: 'ANTHROPIC_API_KEY',
    overloadStatus: 529,
    make: (o = {}) => createAnthropicProvider({ apiKey: 'k', baseURL: server.anthropicURL, maxRetries: o.maxRetries ?? 2, idleTimeoutMs: o.idleTimeoutMs ?? 5_000 }),
    text: (parts) => anthropicStream({ text: parts }),
    tool: (name, j) => anthropicStream({ text: ['Writing.'], tool: { name, json: j } }),
    errorBody: (status) => ({ type: 'error', error: { type: status === 529 ? 'overloaded_error' : 'api_error', message: status === 529 ? 'Overloaded' : 'Internal server error' } }),
  },
  {
    id: 'openai',
    keyVar: 'OPENAI_API_KEY',
    overloadStatus: 503,
    make: (o = {}) => createOpenAIProvider({ apiKey: 'k', baseURL: server.openaiURL, maxRetries: o.maxRetries ?? 2, idleTimeoutMs: o.idleTimeoutMs ?? 5_000 }),
    text: (parts) => openaiStream({ text: parts }),
    tool: (name, j) => openaiStream({ text: ['Writing.'], toolDeltas: [{ index: 0, id: 'call_1', name, args: j[0] }, ...j.slice(1).map((a) => ({ index: 0, args: a }))] }),
    errorBody: (status) => ({ error: { message: status === 503 ? 'The engine is currently overloaded' : 'The server had an error', type: 'server_error', param: null, code: null } }),
  },
];

function message(e: ProviderEvent | undefined): string {
  assert.equal(e?.type, 'error', `expected an error event, got ${JSON.stringify(e)}`);
  return (e as { message: string }).message;
}

function assertOneTerminal(events: readonly ProviderEvent[]): void {
  const terminals = terminalEvents(events);
  assert.equal(terminals.length, 1, `one terminal event in ${JSON.stringify(events)}`);
  assert.equal(terminals[0], events[events.length - 1]);
}

for (const v of vendors) {
  const run = (p: Provider, signal?: AbortSignal) => collect(p, request({ model: v.id === 'anthropic' ? 'claude-haiku-4-5' : 'gpt-4.1' }), signal);

  test(`${v.id}: 429 with retry-after (seconds) is waited out, announced, then succeeds`, async () => {
    const body = v.errorBody(429);
    server.enqueue({ kind: 'json', status: 429, body, headers: { 'retry-after': '0.05' } }, sse(v.text(['fine'])));
    const r = await run(v.make());
    assert.equal(r.text, 'fine');
    assert.deepEqual(r.notices, [`${v.id}: retrying (1/2) after 429 rate limited`]);
    // Measured between the two requests the server received (a lower bound: load only adds to it).
    const [first, second] = server.requests;
    assert.ok(second!.receivedAt - first!.receivedAt >= 45, `retried after ${(second!.receivedAt - first!.receivedAt).toFixed(0)} ms, retry-after is 0.05 s`);
    assertOneTerminal(r.events);
  });

  test(`${v.id}: a burst of ${v.overloadStatus}s within the retry budget succeeds`, async () => {
    const body = v.errorBody(v.overloadStatus);
    server.enqueue(json(v.overloadStatus, body), json(v.overloadStatus, body), sse(v.text(['made it'])));
    const r = await run(v.make());
    assert.equal(r.text, 'made it');
    assert.equal(r.notices.length, 2);
    assert.match(r.notices[1]!, new RegExp(`^${v.id}: retrying \\(2/2\\) after ${v.overloadStatus} `));
  });

  test(`${v.id}: 500 until retries run out ends with one error`, async () => {
    const before = server.requests.length;
    server.enqueue(json(500, v.errorBody(500)), json(500, v.errorBody(500)), json(500, v.errorBody(500)), json(500, v.errorBody(500)));
    const r = await run(v.make({ maxRetries: 3 }));
    assert.equal(server.requests.length - before, 4);
    assert.deepEqual(r.notices.map((n) => n.replace(/ after .*/, '')), [1, 2, 3].map((n) => `${v.id}: retrying (${n}/3)`));
    assert.match(message(r.last), new RegExp(`^${v.id}: 500 .*\\(gave up after 3 retries\\)$`));
    assert.equal((r.last as { status?: number }).status, 500);
    assertOneTerminal(r.events);
  });

  test(`${v.id}: maxRetries 0 reports the first failure without a notice`, async () => {
    server.enqueue(json(v.overloadStatus, v.errorBody(v.overloadStatus)));
    const r = await run(v.make({ maxRetries: 0 }));
    assert.deepEqual(r.notices, []);
    assert.match(message(r.last), new RegExp(`^${v.id}: ${v.overloadStatus} `));
    assert.doesNotMatch(message(r.last), /gave up/);
    assert.equal(server.requests.length, 1, 'no retry');
  });

  test(`${v.id}: 401 names the variable to set`, async () => {
    server.enqueue(json(401, { error: { type: 'authentication_error', message: 'bad key' } }));
    const r = await run(v.make());
    assert.match(message(r.last), new RegExp(`^the API key for ${v.id} was rejected: set ${v.keyVar}`));
    assert.deepEqual(r.notices, []);
  });

  test(`${v.id}: a slow first byte within the idle timeout succeeds`, async () => {
    server.enqueue({ kind: 'sse', body: v.text(['slow', ' but fine']), firstByteDelayMs: 150 });
    // 5 s of idle timeout against a 150 ms first byte: a loaded machine never reaches it, and it costs nothing.
    const r = await run(v.make({ idleTimeoutMs: 5_000 }));
    assert.equal(r.text, 'slow but fine');
    assert.ok(r.ms >= 140);
  });

  test(`${v.id}: no first byte within the idle timeout is an idle error, promptly`, async () => {
    // The server never answers until the client hangs up: only the idle timeout can end the call.
    // 2 s, not less: a loaded machine must not turn the connection's own set-up into an idle error.
    server.enqueue({ kind: 'sse', body: v.text(['late']), firstByteDelayMs: 600_000 });
    const r = await run(v.make({ idleTimeoutMs: 2_000 }));
    assert.deepEqual(r.events, [{ type: 'error', message: `no data from ${v.id} for 2 s`, retryable: true }]);
    await server.requests[0]!.done;
    assert.equal(server.requests[0]!.clientClosedEarly, true, 'the request was abandoned, not answered');
  });

  test(`${v.id}: a stream stalled mid-reply longer than the idle timeout ends with an idle error`, async () => {
    const body = v.text(['first part', ' never comes']);
    const cut = body.indexOf('never') - 40;
    server.enqueue(sse(body, { stallAfterBytes: cut, chunkBytes: 64 }));
    const r = await run(v.make({ idleTimeoutMs: 2_000 })); // the time the stall is judged by: 2 s holds on a loaded machine
    assert.equal(message(r.last), `no data from ${v.id} for 2 s`); // the stream never resumes: only the idle timeout ends it
    assertOneTerminal(r.events);
  });

  test(`${v.id}: a hang-up in the middle of tool JSON drops the partial call and ends with one error`, async () => {
    const body = v.tool('file_write', ['{"path": "notes/a.md", ', '"content": "# Title\\n', 'more text"}']);
    server.enqueue(sse(body, { hangUpAfterBytes: body.indexOf('# Title') + 5, chunkBytes: 32 }));
    const r = await run(v.make());
    assert.ok(!r.events.some((e) => e.type === 'tool-call'), 'no half-assembled tool call');
    assert.match(message(r.last), new RegExp(`^${v.id}: (the connection dropped mid-response|the response stream ended before the reply was complete)`));
    assertOneTerminal(r.events);
  });

  test(`${v.id}: a connection closed before any response is retried like the SDK does`, async () => {
    server.enqueue({ kind: 'hangup' }, sse(v.text(['after hang-up'])));
    const r = await run(v.make());
    assert.equal(r.text, 'after hang-up');
    assert.equal(r.notices.length, 1);
    assert.match(r.notices[0]!, new RegExp(`^${v.id}: retrying \\(1/2\\) after connection error`));
  });

  test(`${v.id}: malformed JSON in an SSE event ends with one readable error`, async () => {
    const good = v.text(['ok']);
    // The second `data:` line (the first content event) loses a closing quote.
    let seen = 0;
    const bad = good.replace(/^data: \{/gm, (m) => (++seen === 2 ? 'data: {"broken: 1, ' : m));
    assert.notEqual(bad, good);
    server.enqueue(sse(bad));
    const r = await run(v.make());
    assert.match(message(r.last), new RegExp(`^${v.id}: malformed data in the response stream \\(`));
    assertOneTerminal(r.events);
  });

  test(`${v.id}: a 200 with a body that is not an event stream`, async () => {
    const html: ScriptedResponse = { kind: 'raw', status: 200, contentType: 'text/html', body: '<html><body><h1>502 Bad Gateway</h1></body></html>' };
    server.enqueue(html);
    const r = await run(v.make());
    assert.deepEqual(r.events, [
      { type: 'error', retryable: false, message: `${v.id}: the response is not an event stream (text/html): <html><body><h1>502 Bad Gateway</h1></body></html>` },
    ]);
    server.enqueue({ kind: 'raw', status: 200, contentType: 'application/json', body: '{"unexpected": true}' });
    assert.match(message((await run(v.make())).last), /not an event stream \(application\/json\): \{"unexpected": true\}/);
  });

  test(`${v.id}: a server asking to wait longer than a minute is not retried`, { timeout: 60_000 }, async () => {
    const before = server.requests.length;
    server.enqueue({ kind: 'json', status: 429, body: v.errorBody(429), headers: { 'retry-after': '3600' } });
    const r = await run(v.make());
    assert.equal(server.requests.length - before, 1);
    assert.deepEqual(r.notices, []);
    assert.match(message(r.last), new RegExp(`^${v.id}: 429 .*\\(not retried: the server asked to wait 3600 s\\)$`));

  });

  test(`${v.id}: an abort while waiting out a retry stops at once`, { timeout: 60_000 }, async () => {
    server.enqueue({ kind: 'json', status: 429, body: v.errorBody(429), headers: { 'retry-after': '30' } });
    const controller = new AbortController();
    const running = run(v.make(), controller.signal);
    // Abort once the 429 went out (the client is then waiting out the 30 s), not after a guessed delay.
    await until(() => server.requests.length === 1, 'the first request arrived');
    await server.requests[0]!.done;
    controller.abort();
    const r = await running;
    assert.deepEqual(r.last, { type: 'error', message: 'aborted', retryable: false });
    assert.equal(server.requests.length, 1, 'stopped without retrying (the retry would come after 30 s)');
  });
}

test('the default idle message reads in whole seconds', () => {
  assert.equal(idleMessage('anthropic', 120_000), 'no data from anthropic for 120 s');
  assert.equal(idleMessage('openai', 1_500), 'no data from openai for 1.5 s');
});
