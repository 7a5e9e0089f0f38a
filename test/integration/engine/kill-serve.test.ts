import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { restateServerBinary } from '../../../src/engine/local-engine';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { killHard, projectionLines, runLegion, startEngineStack } from '../../helpers/engine-fixture';

const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

test('kill -9 legion serve mid-turn: the turn goes on in the engine; the next legion serve finds it whole and takes turns again', { skip, timeout: 180_000 }, async () => {
  await withTempDir(async (dir) => {
    const stack = await startEngineStack(dir, { answerChunks: 40, delayMs: 50 });
    const { model, env } = stack;
    try {
      const client = runLegion(dir, env, ['run', '--attach', '--to', 'builder', 'build it']);
      await model.streaming((r) => r.last === 'tool', 5);
      await killHard(stack.serve);
      const cut = await client;
      assert.notEqual(cut.code, 0, 'the attached client did not notice the server went away');
      // Nobody holds the turn but the engine: it ends on the worker, the projection whole.
      await until(() => projectionLines(dir).length === 4, 'the turn finished on the engine', 60_000, 50);
      assert.deepEqual(model.requests.map((r) => [r.last, r.finished]), [['user', true], ['tool', true]]);
      assert.equal(readFileSync(join(dir, 'starts.txt'), 'utf8'), 'started\n');
      await stack.restartServe();
      const next = await runLegion(dir, env, ['run', '--attach', '--to', 'builder', 'again']);
      assert.equal(next.code, 0, next.stderr);
      assert.match(next.stdout, /piece 39\./);
      assert.equal(projectionLines(dir).length, 8);
    } finally {
      await stack.close();
    }
  });
});
