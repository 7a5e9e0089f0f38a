import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { restateServerBinary } from '../../../src/engine/local-engine';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { projectionLines, startEngineStack } from '../../helpers/engine-fixture';

const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

const roles = (dir: string): string[] => projectionLines(dir).map((l) => (JSON.parse(l) as { role: string }).role);

test('cancelling a turn in a front end of legion serve cancels its invocation on the engine: the turn ends interrupted, the history valid, the session takes the next message', { skip, timeout: 180_000 }, async () => {
  await withTempDir(async (dir) => {
    const stack = await startEngineStack(dir, { answerChunks: 400, delayMs: 50 });
    try {
      const remote = await stack.attach();
      const sent = remote.send('builder', 'build it');
      assert.ok(sent.ok);
      await stack.model.streaming((r) => r.last === 'tool', 5);
      remote.cancel(sent.sessionId);
      // 400 pieces 50 ms apart would take 20 s: the cancel ends it well before.
      const started = Date.now();
      await until(() => remote.sessions().find((s) => s.id === sent.sessionId)?.status === 'idle', 'the session idle after the cancel', 15_000, 20);
      assert.ok(Date.now() - started < 15_000);
      await until(() => roles(dir).length >= 3, 'the projection written', 10_000, 20);
      // Valid: the call answered, no half answer after it.
      assert.deepEqual(roles(dir), ['user', 'assistant', 'user']);
      // The session is free on the engine: the next message is answered.
      const next = remote.send('builder', 'again');
      assert.ok(next.ok);
      await until(() => roles(dir).length === 7, 'the next turn answered', 60_000, 50);
    } finally {
      await stack.close();
    }
  });
});
