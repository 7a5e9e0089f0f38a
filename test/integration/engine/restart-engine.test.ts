import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { layoutFor } from '../../../src/storage/layout';
import { restateServerBinary, freePort } from '../../../src/engine/local-engine';
import { pidIsAlive } from '../../../src/storage/lock-file';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { killHard, sendTurn, startEngine, startEngineScene, startWorker } from '../../helpers/engine-fixture';

const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

test('kill -9 the engine itself mid-turn, start it again on its data: the turn ends on the worker, the tool ran once, the history valid', { skip, timeout: 180_000 }, async () => {
  await withTempDir(async (dir) => {
    const scene = await startEngineScene(dir, { answerChunks: 40, delayMs: 50 });
    const { model, env, run, sessionId } = scene;
    let engine = scene.engine;
    const file = layoutFor(dir).sessionFile(run.id, sessionId);
    const worker = await startWorker(dir, env, await freePort());
    try {
      const cut = sendTurn(engine.ingress, sessionId, { runId: run.id, responderId: 'builder', name: 'default', text: 'build it' }).catch((error: Error) => error);
      await model.streaming((r) => r.last === 'tool', 5);
      const before = engine;
      process.kill(-before.pid, 'SIGKILL');
      await until(() => !pidIsAlive(before.pid), 'the engine gone', 10_000);
      assert.ok((await cut) instanceof Error, 'the ingress call survived the engine');
      // Same data, same ports (startLocalEngine reuses them): the engine finds the invocation in its log.
      engine = await startEngine(dir);
      assert.equal(engine.ingress, before.ingress);
      await until(() => existsSync(file) && readFileSync(file, 'utf8').trim().split('\n').length === 4, 'the turn ended after the restart', 40_000, 100)
        .catch((error: Error) => { throw new Error(`${error.message}\nworker: ${worker.log.join('').slice(-3000)}\nengine: ${readFileSync(join(dir, 'engine.log'), 'utf8').slice(-3000)}`); });
      // Let a late attempt (cut off from the engine) finish before reading.
      await new Promise((r) => setTimeout(r, 1000));
      const messages = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { role: string });
      assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
      assert.equal(readFileSync(join(dir, 'starts.txt'), 'utf8'), 'started\n', 'the tool ran again');
      // The first call (the tool call) finished and was journaled before the engine died: never asked again.
      assert.equal(model.requests.filter((r) => r.last === 'user').length, 1);
    } finally {
      await killHard(worker.child);
      try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
      await model.close();
    }
  });
});
