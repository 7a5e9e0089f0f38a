import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { layoutFor } from '../../../src/storage/layout';
import { restateServerBinary, freePort } from '../../../src/engine/local-engine';
import { registerDeployment } from '../../../src/engine/admin';
import { withTempDir } from '../../helpers/tmp';
import { killHard, sendTurn, startBalancer, startEngineScene, startWorker, type WorkerProcess } from '../../helpers/engine-fixture';

const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

test('two workers behind one URL, the one running the turn killed with SIGKILL: the other finishes it; nothing finished repeated', { skip, timeout: 180_000 }, async () => {
  await withTempDir(async (dir) => {
    const { model, engine, env, run, sessionId } = await startEngineScene(dir, { answerChunks: 40, delayMs: 50 });
    const ports = [await freePort(), await freePort()];
    const workers: WorkerProcess[] = [];
    for (const port of ports) workers.push(await startWorker(dir, env, port, ['--no-register']));
    const lb = await startBalancer(ports);
    try {
      const registered = await registerDeployment(engine.admin, `http://127.0.0.1:${lb.port}`);
      assert.ok(registered.ok, registered.ok ? '' : registered.error);
      const outcome = sendTurn(engine.ingress, sessionId, { runId: run.id, responderId: 'builder', name: 'default', text: 'build it' });
      await model.streaming((r) => r.last === 'tool', 10);
      // The invocation's connection goes through the balancer to one worker: kill that one.
      const runningOn = lb.used.at(-1)!;
      const victim = workers[ports.indexOf(runningOn)]!;
      await killHard(victim.child);
      const result = await outcome as { kind: string };
      assert.equal(result.kind, 'done', JSON.stringify(result));
      const finished = model.requests.filter((r) => r.finished).map((r) => r.history);
      assert.equal(finished.length, new Set(finished).size, 'a finished model call was made again');
      assert.equal(readFileSync(join(dir, 'starts.txt'), 'utf8'), 'started\n');
      const file = layoutFor(dir).sessionFile(run.id, sessionId);
      assert.ok(existsSync(file));
      assert.equal(readFileSync(file, 'utf8').trim().split('\n').length, 4);
      assert.notEqual(lb.used.at(-1), runningOn, 'the turn did not move to the other worker');
    } finally {
      lb.server.close();
      for (const w of workers) await killHard(w.child);
      try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
      await model.close();
    }
  });
});
