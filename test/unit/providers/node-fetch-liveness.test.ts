import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { Socket, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { createNodeFetch } from '../../../src/providers/node-fetch';

/**
 * While node fetch holds an event stream's socket (docs/streaming.md), the socket is not read,
 * so it no longer keeps the event loop alive: the hold's timer must. A process whose only work
 * is reading the body (a script, a worker with nothing else pending) must read it to the end,
 * not exit in the middle of a window.
 */
test('node fetch: a process whose only pending work is the streamed body reads it to the end (the gather window keeps it alive)', async () => {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let i = 0;
    const next = (): void => {
      res.write(`data: ${i}\n\n`);
      if (++i === 20) return void res.end();
      setTimeout(next, 5);
    };
    next();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const module = fileURLToPath(new URL('../../../src/providers/node-fetch.ts', import.meta.url));
  // No timer, no stdin, no server in the child: only the fetch.
  const script = `
    const { createNodeFetch } = await import(${JSON.stringify(module)});
    let text = '';
    process.on('exit', () => process.stdout.write(JSON.stringify({ events: (text.match(/data:/g) ?? []).length, text })));
    const response = await createNodeFetch({ gatherMs: 50 })('http://127.0.0.1:${port}/');
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString('utf8');
    }
    text += 'END';
  `;
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (data: Buffer) => { out += data.toString('utf8'); });
    await new Promise((resolve) => child.on('close', resolve));
    const seen = JSON.parse(out) as { events: number; text: string };
    assert.equal(seen.events, 20, `the child exited after ${seen.events} of 20 events`);
    assert.ok(seen.text.endsWith('END'), 'the body was read to its end');
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/**
 * The hold relies on net.Socket's `_read` starting the handle reading again at the release. A
 * Node whose `_read` does not (another version's internals) must not leave the body hanging:
 * the release starts the handle itself (fail safe: reading as without a hold).
 */
test('node fetch: a release on a Node whose socket _read does not restart reading still reads the rest (no hang)', async () => {
  let more!: () => void;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: 1\n\n');
    more = () => res.end('data: 2\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const original = Socket.prototype._read;
  try {
    const response = await createNodeFetch({ gatherMs: 20 })(`http://127.0.0.1:${port}/`);
    const reader = response.body!.getReader();
    assert.equal(Buffer.from((await reader.read()).value!).toString('utf8'), 'data: 1\n\n'); // the hold starts
    // From here on, a socket's _read leaves a stopped handle stopped.
    (Socket.prototype as unknown as { _read(n: number): void })._read = () => undefined;
    more();
    const rest = await Promise.race([
      (async () => {
        let text = '';
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return text;
          text += Buffer.from(value).toString('utf8');
        }
      })(),
      new Promise<string>((resolve) => setTimeout(() => resolve('(hung)'), 5_000).unref()),
    ]);
    assert.equal(rest, 'data: 2\n\n');
  } finally {
    (Socket.prototype as unknown as { _read: typeof original })._read = original;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
