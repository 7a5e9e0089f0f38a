import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { Http2Server, ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { startEngineHub } from '../../../src/engine/hub';
import { SESSION_OBJECT } from '../../../src/engine/session-object';
import { startFakeWorkerFeed } from '../../helpers/fake-worker-feed';

/**
 * How often the hub asks the admin API for workers (docs/engine.md#streaming-and-the-hub): each
 * turn sent asks for a look that begins after it, but turns sent together share looks. The fake
 * admin API answers what it lists when the request arrives, and can hold its answers.
 */
async function fakeEngine() {
  const workers: Http2Server[] = [];
  const feeds: ServerHttp2Stream[] = [];
  const startWorker = async (): Promise<string> => {
    const worker = await startFakeWorkerFeed(feeds);
    workers.push(worker.server);
    return worker.url;
  };
  const listed: string[] = [];
  let requests = 0;
  let hold = false;
  const held: (() => void)[] = [];
  const admin = createServer((_req, res: ServerResponse) => {
    requests += 1;
    const body = JSON.stringify({ deployments: listed.map((uri, i) => ({ id: `dp_${i}`, uri, services: [{ name: SESSION_OBJECT }] })) });
    if (hold) held.push(() => res.end(body));
    else res.end(body);
  });
  const open: ServerResponse[] = [];
  const ingress = createServer((req, res) => { req.resume(); open.push(res); });
  for (const server of [admin, ingress]) await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = (server: typeof admin): string => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    admin: url(admin), ingress: url(ingress), feeds, listed, startWorker,
    requests: () => requests,
    hold: () => void (hold = true),
    release: () => { hold = false; for (const answer of held.splice(0)) answer(); },
    heldCount: () => held.length,
    close: async () => {
      for (const res of open) res.destroy();
      ingress.closeAllConnections(); admin.closeAllConnections();
      await Promise.all([admin, ingress].map((s) => new Promise((r) => s.close(r))));
      for (const f of feeds) f.destroy();
      await Promise.all(workers.map((w) => new Promise((r) => w.close(r))));
    },
  };
}

const until = async (check: () => boolean, what: string): Promise<void> => {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), what);
};

const input = (n: number) => ({ runId: 'r1', responderId: 'builder', name: `s${n}`, text: 'hi' });

test('twenty turns sent at once ask the admin API for workers at most twice, not once each', async () => {
  const engine = await fakeEngine();
  engine.listed.push(await engine.startWorker());
  // No poll during the test: only the turns ask.
  const hub = startEngineHub({ ingress: engine.ingress, admin: engine.admin, runId: 'r1', onEvent: () => undefined, pollMs: 60_000 });
  try {
    await until(() => engine.feeds.length === 1, 'the worker is followed');
    const before = engine.requests();
    for (let i = 0; i < 20; i++) void hub.runTurn(input(i), `session-user__builder__s${i}`);
    await new Promise((r) => setTimeout(r, 300));
    const asked = engine.requests() - before;
    assert.ok(asked >= 1 && asked <= 2, `the admin API was asked ${asked} times`);
  } finally {
    hub.close();
    await engine.close();
  }
});

test('a turn sent while a look is under way gets a look of its own after it: a worker registered just before the turn is followed', async () => {
  const engine = await fakeEngine();
  engine.listed.push(await engine.startWorker());
  const hub = startEngineHub({ ingress: engine.ingress, admin: engine.admin, runId: 'r1', onEvent: () => undefined, pollMs: 60_000 });
  try {
    await until(() => engine.feeds.length === 1, 'the first worker is followed');
    engine.hold();
    void hub.runTurn(input(1), 'session-user__builder__s1');
    await until(() => engine.heldCount() === 1, 'the first turn\'s look is under way');
    // A second worker registers, then a turn is sent: the look under way answered before it.
    engine.listed.push(await engine.startWorker());
    void hub.runTurn(input(2), 'session-user__builder__s2');
    void hub.runTurn(input(3), 'session-user__builder__s3');
    engine.release();
    await until(() => engine.feeds.length === 2, 'the second worker is followed without waiting for the poll');
  } finally {
    hub.close();
    await engine.close();
  }
});
