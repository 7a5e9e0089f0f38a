import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { restateServerBinary } from '../../../src/engine/local-engine';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { killHard, projectionLines, startEngineStack } from '../../helpers/engine-fixture';

const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

test('an approval pending on the engine survives a worker killed with SIGKILL: decided in a front end of legion serve, the turn ends on a new worker; the tool runs once', { skip, timeout: 180_000 }, async () => {
  await withTempDir(async (dir) => {
    const stack = await startEngineStack(dir, { answerChunks: 3, delayMs: 10, toolDecision: 'ask' });
    try {
      const remote = await stack.attach();
      const sent = remote.send('builder', 'build it');
      assert.ok(sent.ok, JSON.stringify(sent));
      await until(() => remote.pendingApprovals().length === 1, 'the request reached the front end', 60_000, 20);
      assert.equal(remote.pendingApprovals()[0]!.toolName, 'shell');
      await killHard(stack.worker.child);
      await stack.restartWorker();
      // Whatever the engine did meanwhile (replayed the turn, or kept it suspended on the awakeable), one request is pending.
      await new Promise((r) => setTimeout(r, 1500));
      await until(() => remote.pendingApprovals().length === 1, 'one request pending after the restart', 30_000, 20);
      const pending = remote.pendingApprovals()[0]!;
      assert.deepEqual(remote.resolveApprovals([pending.requestId], 'approved'), { ok: true });
      await until(() => projectionLines(dir).length === 4, 'the turn ended', 60_000, 50);
      assert.equal(readFileSync(join(dir, 'starts.txt'), 'utf8'), 'started\n', 'the tool ran other than once');
      const finished = stack.model.requests.filter((r) => r.finished).map((r) => r.history);
      assert.equal(finished.length, new Set(finished).size, 'a finished model call was made again');
      assert.match(projectionLines(dir)[2]!, /tool-output/);
      await until(() => remote.pendingApprovals().length === 0, 'the queue empty', 10_000, 20);
    } finally {
      await stack.close();
    }
  });
});
