import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { startEngineHub } from '../../../src/engine/hub';
import { SESSION_OBJECT, TURN_HEADER } from '../../../src/engine/session-object';
import { startFakeWorkerFeed, TEST_FEED_TOKEN } from '../../helpers/fake-worker-feed';

/**
 * A hub against a fake engine (docs/engine.md#streaming-and-the-hub): the admin API lists one
 * worker, whose feed this test writes; the ingress holds each turn's request open until the test
 * answers it, as the engine does until it has recorded the turn's end.
 */
async function fakeEngine() {
  const feeds: ServerHttp2Stream[] = [];
  const { server: worker, url: workerUrl } = await startFakeWorkerFeed(feeds);
  const admin = createServer((_req, res) => res.end(JSON.stringify({ deployments: [{ id: 'dp_1', uri: workerUrl, services: [{ name: SESSION_OBJECT }] }] })));
  const turns: { turnId: string; response: ServerResponse }[] = [];
  const ingress = createServer((req: IncomingMessage, res) => {
    req.resume();
    req.on('end', () => turns.push({ turnId: String(req.headers[TURN_HEADER]), response: res }));
  });
  for (const server of [admin, ingress]) await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = (server: typeof admin): string => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    admin: url(admin), ingress: url(ingress), turns, feeds,
    writeFeed: (line: unknown) => { for (const f of feeds) f.write(JSON.stringify(line) + '\n'); },
    close: async () => {
      for (const t of turns) t.response.destroy();
      ingress.closeAllConnections(); admin.closeAllConnections();
      await Promise.all([admin, ingress].map((s) => new Promise((r) => s.close(r))));
      for (const f of feeds) f.destroy();
      await new Promise((r) => worker.close(r));
    },
  };
}

const until = async (check: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), 'in time');
};

test('the hub ends a turn on the outcome its worker publishes for the turn\'s id, without waiting for the engine\'s answer', async () => {
  const engine = await fakeEngine();
  const hub = startEngineHub({ ingress: engine.ingress, admin: engine.admin, runId: 'r1', feedToken: TEST_FEED_TOKEN, onEvent: () => undefined, pollMs: 20 });
  try {
    await until(() => engine.feeds.length === 1);
    const outcome = hub.runTurn({ runId: 'r1', responderId: 'builder', name: 'default', text: 'hi' }, 'session-user__builder__default');
    await until(() => engine.turns.length === 1);
    const { turnId } = engine.turns[0]!;
    assert.match(turnId, /^[0-9a-f-]{36}$/, 'each turn is sent with its own id');
    // Lines that are not this turn's outcome change nothing: another turn's id, another run, not an outcome.
    engine.writeFeed({ runId: 'r1', outcome: { turnId: 'another', sessionId: 'session-user__builder__default', outcome: { kind: 'done', text: 'not mine' } } });
    engine.writeFeed({ runId: 'r2', outcome: { turnId, sessionId: 'session-user__builder__default', outcome: { kind: 'done', text: 'another run' } } });
    engine.writeFeed({ runId: 'r1', outcome: { turnId, sessionId: 'session-user__builder__default', outcome: { kind: 'finished?' } } });
    const early = await Promise.race([outcome, new Promise((r) => setTimeout(() => r('still waiting'), 200))]);
    assert.equal(early, 'still waiting');
    engine.writeFeed({ runId: 'r1', outcome: { turnId, sessionId: 'session-user__builder__default', outcome: { kind: 'done', text: 'the answer' } } });
    assert.deepEqual(await outcome, { kind: 'done', text: 'the answer' }, 'while the engine has not answered yet');
  } finally {
    hub.close();
    await engine.close();
  }
});

test('without a word from the feed, the engine\'s answer ends the turn', async () => {
  const engine = await fakeEngine();
  const hub = startEngineHub({ ingress: engine.ingress, admin: engine.admin, runId: 'r1', feedToken: TEST_FEED_TOKEN, onEvent: () => undefined, pollMs: 20 });
  try {
    const outcome = hub.runTurn({ runId: 'r1', responderId: 'builder', name: 'default', text: 'hi' }, 'session-user__builder__default');
    await until(() => engine.turns.length === 1);
    engine.turns[0]!.response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'failed', error: 'the model refused' }));
    assert.deepEqual(await outcome, { kind: 'failed', error: 'the model refused' });
  } finally {
    hub.close();
    await engine.close();
  }
});
