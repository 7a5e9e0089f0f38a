import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { createNodeFetch } from '../../../src/providers/node-fetch';

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
