import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { restateServerBinary, freePort } from '../../../src/engine/local-engine';
import { withTempDir } from '../../helpers/tmp';
import { killHard, sendTurn, startEngineScene, startWorker } from '../../helpers/engine-fixture';

const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

/**
 * SIGTERM stops a worker (docs/engine.md#running-it) even while the engine holds its HTTP/2
 * connection open after a turn: before, the open session kept the process alive for good.
 */
test('legion worker exits on SIGTERM after serving a turn (the engine\'s connection still open)', { skip, timeout: 90_000 }, async () => {
  await withTempDir(async (dir) => {
    const { model, engine, env, run, sessionId } = await startEngineScene(dir, { answerChunks: 2, delayMs: 0 });
    const worker = await startWorker(dir, env, await freePort());
    try {
      const outcome = await sendTurn(engine.ingress, sessionId, { runId: run.id, responderId: 'builder', name: 'default', text: 'build it' }) as { kind: string };
      assert.equal(outcome.kind, 'done', JSON.stringify(outcome));
      const exited = new Promise<number | null>((resolve) => worker.child.once('exit', (code) => resolve(code)));
      worker.child.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 15_000))]);
      assert.equal(code, 0, `the worker did not exit within 15 s of SIGTERM: ${worker.log.join('')}`);
    } finally {
      await killHard(worker.child);
      try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
      await model.close();
    }
  });
});
