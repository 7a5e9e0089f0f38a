import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { restateServerBinary } from '../../../src/engine/local-engine';
import type { LegionEvent } from '../../../src/events/types';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { killHard, projectionLines, startEngineStack } from '../../helpers/engine-fixture';

const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

/**
 * The user's path when `legion serve` dies while a request waits (docs/engine.md#approvals):
 * the turn is suspended in the engine on the request's awakeable and the live worker keeps the
 * request; the next `legion serve` shows it to a front end attached over the socket, whose
 * decision reaches the same turn. Without the worker's kept requests the new front end never
 * sees the request and the turn waits for ever.
 */
async function decideAfterServeRestart(decision: 'approved' | 'rejected', options: { workerToo?: boolean } = {}): Promise<void> {
  await withTempDir(async (dir) => {
    const stack = await startEngineStack(dir, { answerChunks: 3, delayMs: 10, toolDecision: 'ask' });
    try {
      const before = await stack.attach('before');
      assert.ok(before.send('builder', 'build it').ok);
      await until(() => before.pendingApprovals().length === 1, 'the request reached the first front end', 60_000, 20);
      const asked = before.pendingApprovals()[0]!;
      assert.equal(asked.toolName, 'shell');

      await killHard(stack.serve);
      // With the worker too: the engine replays the turn on the next worker, which asks again.
      if (options.workerToo) await stack.restartWorker();
      await stack.restartServe();
      const after = await stack.attach('after');
      const events: LegionEvent[] = [];
      after.bus.subscribeAll((event) => void events.push(event));
      await until(() => after.pendingApprovals().length === 1, 'one request shown by the restarted legion serve', 30_000, 20);
      // The worker's request, once: the same id (the turn was not replayed), or the replay's, never
      // also the dead attempt's (pending in approvals.jsonl, where no worker waits on it any more).
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(after.pendingApprovals().length, 1);
      const shown = after.pendingApprovals()[0]!;
      if (!options.workerToo) assert.equal(shown.requestId, asked.requestId);
      assert.equal(existsSync(join(dir, 'starts.txt')), false, 'the tool ran before it was approved');

      assert.deepEqual(after.resolveApprovals([shown.requestId], decision, decision === 'rejected' ? { reason: 'not now' } : {}), { ok: true });
      await until(() => projectionLines(dir).length === 4, 'the turn ended', 60_000, 50);
      const [, call, result, answer] = projectionLines(dir).map((l) => JSON.stringify(JSON.parse(l)));
      assert.match(call!, /sh tool\.sh/);
      assert.match(answer!, /piece 2\./, 'the turn did not end with the model\'s answer');
      if (decision === 'approved') {
        assert.equal(readFileSync(join(dir, 'starts.txt'), 'utf8'), 'started\n', 'the tool ran other than once');
        assert.match(result!, /tool-output/);
      } else {
        assert.equal(existsSync(join(dir, 'starts.txt')), false, 'a rejected tool ran');
        assert.doesNotMatch(result!, /tool-output/);
        assert.match(result!, /not now/);
      }
      // Two model calls, each once: the user's message, then the tool's result (or its refusal).
      assert.deepEqual(stack.model.requests.map((r) => [r.last, r.finished]), [['user', true], ['tool', true]]);

      // What the attached front end saw: the decision, the tool's end, the session idle again.
      await until(() => after.pendingApprovals().length === 0, 'the queue empty', 10_000, 20);
      await until(() => events.some((e) => e.type === 'agent-status' && e.participantId === 'builder' && e.status === 'idle'), 'the builder idle', 10_000, 20);
      const resolved = events.filter((e) => e.type === 'approval-resolve');
      assert.deepEqual(resolved.map((e) => [e.requestId, e.decision]), [[shown.requestId, decision]]);
      const ends = events.filter((e) => e.type === 'tool-call-end');
      assert.deepEqual(ends.map((e) => [e.isError, e.failure]), [decision === 'approved' ? [false, undefined] : [true, 'rejected']]);
      // A front end attaching now finds nothing waiting (the decided request is not offered again).
      const late = await stack.attach('late');
      assert.deepEqual(late.pendingApprovals(), []);
    } finally {
      await stack.close();
    }
  });
}

test('kill -9 legion serve while an approval waits on a live worker: the next legion serve shows it; approved, the tool runs once and the turn ends; no model call repeated', { skip, timeout: 180_000 }, async () => {
  await decideAfterServeRestart('approved');
});

test('kill -9 legion serve while an approval waits on a live worker: rejected in the next legion serve, the tool never runs and the turn ends with the model told', { skip, timeout: 180_000 }, async () => {
  await decideAfterServeRestart('rejected');
});

test('kill -9 legion serve and the worker while an approval waits: the replay on the next worker asks again; the next legion serve shows that request alone; approved, the tool runs once; no model call repeated', { skip, timeout: 180_000 }, async () => {
  await decideAfterServeRestart('approved', { workerToo: true });
});
