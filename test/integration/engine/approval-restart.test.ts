import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { restateServerBinary, freePort } from '../../../src/engine/local-engine';
import { attachRemote, type RemoteCore } from '../../../src/serve/remote-core';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { killHard, setupEngineWorkspace, spawnLegion, startEngine, startFakeModel, startWorker, type WorkerProcess } from '../../helpers/engine-fixture';

const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

function projection(dir: string): string[] {
  const runsDir = join(dir, '.legion', 'runs');
  for (const run of existsSync(runsDir) ? readdirSync(runsDir) : []) {
    const file = join(runsDir, run, 'sessions', 'session-user__builder__default.jsonl');
    if (existsSync(file)) return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean);
  }
  return [];
}

test('an approval pending on the engine survives a worker killed with SIGKILL: decided in a front end of legion serve, the turn ends on a new worker; the tool runs once', { skip, timeout: 180_000 }, async () => {
  await withTempDir(async (dir) => {
    const model = await startFakeModel({ answerChunks: 3, delayMs: 10 });
    const engine = await startEngine(dir);
    const env = await setupEngineWorkspace(dir, model.url, engine, 0, 'ask');
    const port = await freePort();
    let worker: WorkerProcess = await startWorker(dir, env, port);
    const serve = spawnLegion(dir, env, ['serve']);
    let log = '';
    serve.stderr!.on('data', (d: Buffer) => { log += d.toString(); });
    let remote: RemoteCore | undefined;
    try {
      await until(() => log.includes('serving run'), 'legion serve listening', 60_000);
      const info = JSON.parse(readFileSync(join(dir, '.legion', 'serve.json'), 'utf8')) as { socket: string };
      remote = (await attachRemote({ socket: info.socket, client: 'test' })).core;
      const sent = remote.send('builder', 'build it');
      assert.ok(sent.ok, JSON.stringify(sent));
      await until(() => remote!.pendingApprovals().length === 1, 'the request reached the front end', 60_000, 20);
      assert.equal(remote.pendingApprovals()[0]!.toolName, 'shell');
      await killHard(worker.child);
      worker = await startWorker(dir, env, port);
      // Whatever the engine did meanwhile (replayed the turn, or kept it suspended on the awakeable), one request is pending.
      await new Promise((r) => setTimeout(r, 1500));
      await until(() => remote!.pendingApprovals().length === 1, 'one request pending after the restart', 30_000, 20);
      const pending = remote.pendingApprovals()[0]!;
      assert.deepEqual(remote.resolveApprovals([pending.requestId], 'approved'), { ok: true });
      await until(() => projection(dir).length === 4, 'the turn ended', 60_000, 50);
      assert.equal(readFileSync(join(dir, 'starts.txt'), 'utf8'), 'started\n', 'the tool ran other than once');
      const finished = model.requests.filter((r) => r.finished).map((r) => r.history);
      assert.equal(finished.length, new Set(finished).size, 'a finished model call was made again');
      assert.match(projection(dir)[2]!, /tool-output/);
      await until(() => remote!.pendingApprovals().length === 0, 'the queue empty', 10_000, 20);
    } finally {
      await remote?.shutdown('test over');
      await killHard(serve);
      await killHard(worker.child);
      try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
      await model.close();
    }
  });
});
