import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { restateServerBinary, freePort } from '../../../src/engine/local-engine';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { killHard, runLegion, setupEngineWorkspace, spawnLegion, startEngine, startFakeModel, startWorker } from '../../helpers/engine-fixture';

const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

/** Lines of the builder's session file in the workspace's only run. */
function projection(dir: string): string[] {
  const runsDir = join(dir, '.legion', 'runs');
  for (const run of existsSync(runsDir) ? readdirSync(runsDir) : []) {
    const file = join(runsDir, run, 'sessions', 'session-user__builder__default.jsonl');
    if (existsSync(file)) return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean);
  }
  return [];
}

test('kill -9 legion serve mid-turn: the turn goes on in the engine; the next legion serve finds it whole and takes turns again', { skip, timeout: 180_000 }, async () => {
  await withTempDir(async (dir) => {
    const model = await startFakeModel({ answerChunks: 40, delayMs: 50 });
    const engine = await startEngine(dir);
    const env = await setupEngineWorkspace(dir, model.url, engine);
    const worker = await startWorker(dir, env, await freePort());
    let serve = spawnLegion(dir, env, ['serve']);
    try {
      await until(() => existsSync(join(dir, '.legion', 'serve.json')), 'legion serve listening', 60_000);
      const client = runLegion(dir, env, ['run', '--attach', '--to', 'builder', 'build it']);
      await model.streaming((r) => r.last === 'tool', 5);
      await killHard(serve);
      const cut = await client;
      assert.notEqual(cut.code, 0, 'the attached client did not notice the server went away');
      // Nobody holds the turn but the engine: it ends on the worker, the projection whole.
      await until(() => projection(dir).length === 4, 'the turn finished on the engine', 60_000, 50);
      assert.deepEqual(model.requests.map((r) => [r.last, r.finished]), [['user', true], ['tool', true]]);
      assert.equal(readFileSync(join(dir, 'starts.txt'), 'utf8'), 'started\n');
      serve = spawnLegion(dir, env, ['serve']);
      let log = '';
      serve.stderr!.on('data', (d: Buffer) => { log += d.toString(); });
      await until(() => log.includes('serving run'), 'legion serve listening again', 60_000);
      const next = await runLegion(dir, env, ['run', '--attach', '--to', 'builder', 'again']);
      assert.equal(next.code, 0, next.stderr);
      assert.match(next.stdout, /piece 39\./);
      assert.equal(projection(dir).length, 8);
    } finally {
      await killHard(serve);
      await killHard(worker.child);
      try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
      await model.close();
    }
  });
});
