import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import { createServer as createHttpsServer } from 'node:https';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { createNodeFetch, gathersAtSocket } from '../../../src/providers/node-fetch';

async function serve(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<{ url: string; server: Server; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => { body += chunk.toString('utf8'); });
    req.on('end', () => handler(req, res, body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, server, close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
}

const nodeFetch = createNodeFetch();

test('node fetch: method, headers and body reach the server; status, headers and body come back', async () => {
  const s = await serve((req, res, body) => {
    res.writeHead(201, { 'content-type': 'application/json', 'x-echo': String(req.headers['x-api-key']) });
    res.end(JSON.stringify({ method: req.method, body, length: req.headers['content-length'] }));
  });
  try {
    const response = await nodeFetch(`${s.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': 'k1', 'content-type': 'application/json' }, body: '{"a":"é"}' });
    assert.equal(response.status, 201);
    assert.equal(response.headers.get('x-echo'), 'k1');
    assert.deepEqual(await response.json(), { method: 'POST', body: '{"a":"é"}', length: '10' });
  } finally {
    await s.close();
  }
});

test('node fetch: packets that arrived before a read are one chunk; the stream ends after the last', async () => {
  let allWritten!: () => void;
  const written = new Promise<void>((resolve) => { allWritten = resolve; });
  let finish!: () => void;
  const s = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: 1\n\n');
    setTimeout(() => {
      res.write('data: 2\n\n');
      setTimeout(() => {
        res.write('data: 3\n\n', () => allWritten());
        finish = () => res.end('data: end\n\n');
      }, 5);
    }, 5);
  });
  try {
    const response = await nodeFetch(s.url);
    const reader = response.body!.getReader();
    await written;
    await new Promise((resolve) => setTimeout(resolve, 200)); // the packets reach the client's socket buffer (local TCP)
    const first = await reader.read();
    assert.equal(Buffer.from(first.value!).toString('utf8'), 'data: 1\n\ndata: 2\n\ndata: 3\n\n', 'three packets, one chunk');
    const pending = reader.read();
    finish();
    assert.equal(Buffer.from((await pending).value!).toString('utf8'), 'data: end\n\n');
    assert.equal((await reader.read()).done, true);
  } finally {
    await s.close();
  }
});

/** Count the 'data' events (reads) of client sockets connected to `port` while `fn` runs. */
async function countSocketReads<T>(port: number, fn: (reads: () => number) => Promise<T>): Promise<{ reads: number; result: T }> {
  const emit = Socket.prototype.emit;
  let reads = 0;
  Socket.prototype.emit = function (this: Socket, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'data' && this.remotePort === port) reads += 1;
    return Reflect.apply(emit, this, [event, ...args]) as boolean;
  } as typeof emit;
  try {
    const result = await fn(() => reads);
    return { result, reads };
  } finally {
    Socket.prototype.emit = emit;
  }
}

test('node fetch: an event stream\'s socket is not read for the gather window after a chunk: packets meanwhile are one read, one chunk', async () => {
  let more!: () => void;
  const s = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: 1\n\n');
    more = () => {
      let i = 2;
      const next = (): void => {
        if (i > 6) return void res.end();
        res.write(`data: ${i++}\n\n`);
        setTimeout(next, 5); // a packet each 5 ms, as a model streams
      };
      next();
    };
  });
  try {
    const port = Number(new URL(s.url).port);
    // A window far longer than the five packets take, even on a loaded machine.
    const gathering = createNodeFetch({ gatherMs: 1500 });
    const { reads, result } = await countSocketReads(port, async (readsSoFar) => {
      const response = await gathering(s.url);
      assert.equal(gathersAtSocket(response), true);
      const reader = response.body!.getReader();
      const first = Buffer.from((await reader.read()).value!).toString('utf8');
      const before = readsSoFar();
      const pending = reader.read(); // waiting already: without the hold it gets packet 2 alone
      more();
      const second = Buffer.from((await pending).value!).toString('utf8');
      const rest = readsSoFar() - before;
      return { first, second, readsForRest: rest, done: (await reader.read()).done };
    });
    assert.equal(result.first, 'data: 1\n\n');
    assert.equal(result.second, 'data: 2\n\ndata: 3\n\ndata: 4\n\ndata: 5\n\ndata: 6\n\n', 'the five packets, one chunk');
    assert.ok(result.readsForRest <= 2, `the five packets took ${result.readsForRest} socket reads (held: one, and the end)`);
    assert.equal(result.done, true);
    assert.ok(reads >= 2);

    // Not an event stream: no hold (nothing to gather: the SDK reads it whole).
    const plain = await serve((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    try {
      assert.equal(gathersAtSocket(await gathering(plain.url)), false);
    } finally {
      await plain.close();
    }
  } finally {
    await s.close();
  }
});

test('node fetch: over TLS too, the packets of a gather window are one chunk (TLS pushes each record of a read on its own)', async () => {
  const fixture = (name: string): Buffer => readFileSync(new URL(`../../fixtures/tls/${name}`, import.meta.url));
  let more!: () => void;
  const server = createHttpsServer({ key: fixture('localhost-test-only.key'), cert: fixture('localhost-test-only.crt') }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: 1\n\n');
    more = () => {
      let i = 2;
      const next = (): void => {
        if (i > 9) return void res.end();
        res.write(`data: ${i++}\n\n`);
        setTimeout(next, 3);
      };
      next();
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const reject = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
  process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0'; // the fixture's self-signed certificate, for this test only
  try {
    const response = await createNodeFetch({ gatherMs: 1500 })(`https://127.0.0.1:${port}/`);
    const reader = response.body!.getReader();
    assert.equal(Buffer.from((await reader.read()).value!).toString('utf8'), 'data: 1\n\n');
    const pending = reader.read();
    more();
    assert.equal(Buffer.from((await pending).value!).toString('utf8'), [2, 3, 4, 5, 6, 7, 8, 9].map((i) => `data: ${i}\n\n`).join(''), 'eight records, one chunk');
    assert.equal((await reader.read()).done, true);
  } finally {
    if (reject === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    else process.env.NODE_TLS_REJECT_UNAUTHORIZED = reject;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('node fetch: an abort during the gather window ends the body at once; the next request on the kept-alive socket is not held', async () => {
  const s = await serve((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (req.url === '/short') return void res.end('data: all\n\n');
    res.write('data: 1\n\n');
  });
  try {
    const gathering = createNodeFetch({ gatherMs: 60_000 });
    const during = new AbortController();
    const response = await gathering(`${s.url}/long`, { signal: during.signal });
    const reader = response.body!.getReader();
    await reader.read(); // the hold starts: a minute
    const next = reader.read();
    during.abort(new DOMException('This operation was aborted', 'AbortError'));
    await assert.rejects(next, (error: unknown) => (error as Error).name === 'AbortError');
    // Two whole streams in a row on the pool's sockets: a held socket would stall for a minute (the test's timeout).
    for (let i = 0; i < 2; i++) assert.equal(await (await gathering(`${s.url}/short`)).text(), 'data: all\n\n');
  } finally {
    await s.close();
  }
});

test('node fetch: a gzip body is decompressed; 204 has no body', async () => {
  const s = await serve((req, res) => {
    if (req.url === '/empty') return void res.writeHead(204).end();
    res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' });
    res.end(gzipSync(JSON.stringify({ ok: true, accept: req.headers['accept-encoding'] })));
  });
  try {
    assert.deepEqual(await (await nodeFetch(s.url)).json(), { ok: true, accept: 'gzip, deflate, br' });
    const empty = await nodeFetch(`${s.url}/empty`);
    assert.equal(empty.status, 204);
    assert.equal(empty.body, null);
  } finally {
    await s.close();
  }
});

test('node fetch: failures look like fetch\'s: refused, cut mid-body, aborted before and during the body', async () => {
  const closed = await serve(() => undefined);
  const deadUrl = closed.url;
  await closed.close();
  await assert.rejects(nodeFetch(deadUrl), (error: unknown) => error instanceof TypeError && error.message === 'fetch failed' && (error.cause as NodeJS.ErrnoException).code === 'ECONNREFUSED');

  const s = await serve((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: partial\n\n');
    if (req.url === '/cut') setTimeout(() => res.socket?.destroy(), 20);
  });
  try {
    const cut = await nodeFetch(`${s.url}/cut`);
    const reader = cut.body!.getReader();
    assert.match(Buffer.from((await reader.read()).value!).toString('utf8'), /partial/);
    await assert.rejects(reader.read(), (error: unknown) => error instanceof TypeError && error.message === 'terminated');

    const before = new AbortController();
    before.abort(new Error('stop'));
    await assert.rejects(nodeFetch(s.url, { signal: before.signal }), /stop/);

    const during = new AbortController();
    const open = await nodeFetch(s.url, { signal: during.signal });
    const body = open.body!.getReader();
    await body.read();
    const next = body.read();
    during.abort(new DOMException('This operation was aborted', 'AbortError'));
    await assert.rejects(next, (error: unknown) => (error as Error).name === 'AbortError');
  } finally {
    await s.close();
  }
});

test('node fetch: what it does not handle (a Request, a stream body) goes to the fallback fetch', async () => {
  const seen: unknown[] = [];
  const fallback = (async (input: unknown) => {
    seen.push(input);
    return new Response('from fallback');
  }) as typeof fetch;
  const withFallback = createNodeFetch({ fallback });
  const request = new Request('http://127.0.0.1:9/x');
  assert.equal(await (await withFallback(request)).text(), 'from fallback');
  assert.equal(await (await withFallback('http://127.0.0.1:9/y', { method: 'POST', body: new ReadableStream(), duplex: 'half' } as RequestInit)).text(), 'from fallback');
  assert.equal(seen.length, 2);
});
