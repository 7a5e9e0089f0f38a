import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import type { Http2Server, ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { startEngineHub } from '../../../src/engine/hub';
import { SESSION_OBJECT } from '../../../src/engine/session-object';
import { startFakeWorkerFeed, TEST_FEED_TOKEN } from '../../helpers/fake-worker-feed';
import { freePort } from '../../../src/engine/local-engine';

/**
 * How often the hub asks the admin API for workers (docs/engine.md#streaming-and-the-hub): each
 * turn sent asks for a look that begins after it, but turns sent together share looks; between
 * turns it looks every `pollMs` until it follows every listed worker, then every
 * `settledPollMs`, and every `pollMs` again once a feed is lost. The fake admin API answers what
 * it lists when the request arrives, and can hold its answers.
 */
async function fakeEngine() {
  const workers: Http2Server[] = [];
  const feeds: ServerHttp2Stream[] = [];
  const startWorker = async (port = 0): Promise<string> => {
    const worker = await startFakeWorkerFeed(feeds, port);
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
    /** Turns the ingress received (held open: a turn's outcome never comes). */
    turns: () => open.length,
    hold: () => void (hold = true),
    release: () => { hold = false; for (const answer of held.splice(0)) answer(); },
    heldCount: () => held.length,
    /** Stop every fake worker (their feeds end, as when a worker is killed). */
    stopWorkers: async () => {
      for (const f of feeds) f.destroy();
      await Promise.all(workers.splice(0).map((w) => new Promise((r) => w.close(r))));
    },
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
  const hub = startEngineHub({ ingress: engine.ingress, admin: engine.admin, runId: 'r1', feedToken: TEST_FEED_TOKEN, onEvent: () => undefined, pollMs: 60_000 });
  try {
    await until(() => engine.feeds.length === 1, 'the worker is followed');
    const before = engine.requests();
    for (let i = 0; i < 20; i++) void hub.runTurn(input(i), `session-user__builder__s${i}`);
    // Every turn reached the ingress, so every look they asked for has begun; then a moment for a late one to show.
    await until(() => engine.turns() === 20 && engine.requests() > before, 'the twenty turns sent');
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
  const hub = startEngineHub({ ingress: engine.ingress, admin: engine.admin, runId: 'r1', feedToken: TEST_FEED_TOKEN, onEvent: () => undefined, pollMs: 60_000 });
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('once it follows every listed worker, the hub looks every settledPollMs, not every pollMs', async () => {
  const engine = await fakeEngine();
  engine.listed.push(await engine.startWorker());
  const hub = startEngineHub({ ingress: engine.ingress, admin: engine.admin, runId: 'r1', feedToken: TEST_FEED_TOKEN, onEvent: () => undefined, pollMs: 20, settledPollMs: 60_000 });
  try {
    await until(() => engine.feeds.length === 1, 'the worker is followed');
    // The look after the one that started the feed finds every worker followed (a moment for the hub to read its answer).
    const followedAt = engine.requests();
    await until(() => engine.requests() > followedAt, 'a look after the feed started');
    await sleep(200);
    const before = engine.requests();
    await sleep(600);
    const asked = engine.requests() - before;
    assert.ok(asked <= 1, `the admin API was asked ${asked} times in 600 ms (every 20 ms would be ~30)`);
  } finally {
    hub.close();
    await engine.close();
  }
});

test('a lost feed makes the hub look every pollMs again: a worker restarted at its URL is followed at once', async () => {
  const engine = await fakeEngine();
  const port = await freePort();
  engine.listed.push(await engine.startWorker(port));
  const hub = startEngineHub({ ingress: engine.ingress, admin: engine.admin, runId: 'r1', feedToken: TEST_FEED_TOKEN, onEvent: () => undefined, pollMs: 20, settledPollMs: 60_000 });
  try {
    await until(() => engine.feeds.length === 1, 'the worker is followed');
    await sleep(200);
    // The worker dies; while it is down the feed cannot open (each failed attempt keeps the fast look).
    await engine.stopWorkers();
    await sleep(300);
    await engine.startWorker(port);
    await until(() => engine.feeds.length === 2, 'the restarted worker is followed again without waiting for the settled interval');
  } finally {
    hub.close();
    await engine.close();
  }
});

test('a listed worker whose feed does not open yet is tried every pollMs until it does', async () => {
  const engine = await fakeEngine();
  const port = await freePort();
  // Registered, not serving yet (a worker still starting).
  engine.listed.push(`http://127.0.0.1:${port}`);
  const hub = startEngineHub({ ingress: engine.ingress, admin: engine.admin, runId: 'r1', feedToken: TEST_FEED_TOKEN, onEvent: () => undefined, pollMs: 20, settledPollMs: 60_000 });
  try {
    await sleep(300);
    await engine.startWorker(port);
    await until(() => engine.feeds.length === 1, 'followed once it serves');
  } finally {
    hub.close();
    await engine.close();
  }
});
