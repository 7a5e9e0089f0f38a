import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { restateServerBinary, freePort } from '../../../src/engine/local-engine';
import { attachRemote, type RemoteCore } from '../../../src/serve/remote-core';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { killHard, setupEngineWorkspace, spawnLegion, startEngine, startFakeModel, startWorker } from '../../helpers/engine-fixture';

const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

function projection(dir: string): { role: string }[] {
  const runsDir = join(dir, '.legion', 'runs');
  for (const run of existsSync(runsDir) ? readdirSync(runsDir) : []) {
    const file = join(runsDir, run, 'sessions', 'session-user__builder__default.jsonl');
    if (existsSync(file)) return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { role: string });
  }
  return [];
}

test('cancelling a turn in a front end of legion serve cancels its invocation on the engine: the turn ends interrupted, the history valid, the session takes the next message', { skip, timeout: 180_000 }, async () => {
  await withTempDir(async (dir) => {
    const model = await startFakeModel({ answerChunks: 400, delayMs: 50 });
    const engine = await startEngine(dir);
    const env = await setupEngineWorkspace(dir, model.url, engine);
    const worker = await startWorker(dir, env, await freePort());
    const serve = spawnLegion(dir, env, ['serve']);
    let log = '';
    serve.stderr!.on('data', (d: Buffer) => { log += d.toString(); });
    let remote: RemoteCore | undefined;
    try {
      await until(() => log.includes('serving run'), 'legion serve listening', 60_000);
      const info = JSON.parse(readFileSync(join(dir, '.legion', 'serve.json'), 'utf8')) as { socket: string };
      remote = (await attachRemote({ socket: info.socket, client: 'test' })).core;
      const sent = remote.send('builder', 'build it');
      assert.ok(sent.ok);
      await model.streaming((r) => r.last === 'tool', 5);
      remote.cancel(sent.sessionId);
      // 400 pieces 50 ms apart would take 20 s: the cancel ends it well before.
      const started = Date.now();
      await until(() => remote!.sessions().find((s) => s.id === sent.sessionId)?.status === 'idle', 'the session idle after the cancel', 15_000, 20);
      assert.ok(Date.now() - started < 15_000);
      await until(() => projection(dir).length >= 3, 'the projection written', 10_000, 20);
      // Valid: the call answered, no half answer after it.
      assert.deepEqual(projection(dir).map((m) => m.role), ['user', 'assistant', 'user']);
      // The session is free on the engine: the next message is answered.
      const next = remote.send('builder', 'again');
      assert.ok(next.ok);
      await until(() => projection(dir).length === 7, 'the next turn answered', 60_000, 50);
    } finally {
      await remote?.shutdown('test over');
      await killHard(serve);
      await killHard(worker.child);
      try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
      await model.close();
    }
  });
});
