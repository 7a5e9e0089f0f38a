import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sessionIdOf } from '../../../src/session/ids';
import { layoutFor } from '../../../src/storage/layout';
import { restateServerBinary } from '../../../src/engine/local-engine';
import { CUT_BY_WORKER } from '../../../src/engine/durable-steps';
import { killHard, sendTurn, startWorker, repeatedFinished, withEngineRun, type EngineRunScene, type WorkerProcess } from '../../helpers/engine-fixture';

/**
 * The core proof of engine mode (docs/engine.md#a-turn-on-a-worker): a worker killed with
 * SIGKILL mid-turn, a new worker at the same URL finishes the turn from the engine's journal.
 * Counted: no finished model call is made again, no tool runs twice.
 */
const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

const lines = (file: string): number => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).length : 0);

interface Scene extends EngineRunScene {
  readonly sessionId: string;
}

async function withScene(toolSleep: number, body: (scene: Scene) => Promise<void>): Promise<void> {
  const sessionId = sessionIdOf({ initiatorId: 'user', responderId: 'builder', name: 'default' });
  await withEngineRun({ model: { answerChunks: 60, delayMs: 50 }, toolSleepSeconds: toolSleep }, (scene) => body({ ...scene, sessionId }));
}

function history(scene: Scene): { role: string; content: { type: string; text?: string; content?: string }[] }[] {
  const file = layoutFor(scene.dir).sessionFile(scene.runId, scene.sessionId);
  return readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

test('kill -9 a worker during a model stream: a new worker finishes the turn; no finished model call and no tool run repeated', { skip, timeout: 120_000 }, async () => {
  await withScene(0, async (scene) => {
    const first = await startWorker(scene.dir, scene.env, scene.port);
    const outcome = sendTurn(scene.engine.ingress, scene.sessionId, { runId: scene.runId, responderId: 'builder', name: 'default', text: 'build it' });
    // The answer after the tool is streaming: kill the worker in the middle of it.
    await scene.model.streaming((r) => r.last === 'tool', 10);
    await killHard(first.child);
    let second: WorkerProcess | undefined;
    try {
      second = await startWorker(scene.dir, scene.env, scene.port);
      const result = await outcome as { kind: string; text?: string };
      assert.equal(result.kind, 'done', JSON.stringify(result));
      assert.match(result.text ?? '', /^piece 0\. .*piece 59\. $/);
      assert.equal(repeatedFinished(scene.model), 0, 'a finished model call was made again');
      // The tool call once, the answer twice (cut, then again), nothing else.
      assert.deepEqual(scene.model.requests.map((r) => [r.last, r.finished]), [['user', true], ['tool', false], ['tool', true]]);
      assert.equal(lines(join(scene.dir, 'starts.txt')), 1, 'the tool ran again');
      // The projection holds the turn once: message, call, result, answer.
      const messages = history(scene);
      assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
      assert.match(JSON.stringify(messages[2]), /tool-output/);
    } finally {
      if (second) await killHard(second.child);
    }
  });
});

test('kill -9 a worker during a tool run: the tool is answered "interrupted", not run again; the turn ends', { skip, timeout: 120_000 }, async () => {
  await withScene(4, async (scene) => {
    const first = await startWorker(scene.dir, scene.env, scene.port);
    const outcome = sendTurn(scene.engine.ingress, scene.sessionId, { runId: scene.runId, responderId: 'builder', name: 'default', text: 'build it' });
    const starts = join(scene.dir, 'starts.txt');
    const deadline = Date.now() + 60_000;
    while (lines(starts) === 0) {
      assert.ok(Date.now() < deadline, `the tool never started: ${first.log.join('')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    await killHard(first.child);
    let second: WorkerProcess | undefined;
    try {
      second = await startWorker(scene.dir, scene.env, scene.port);
      const result = await outcome as { kind: string };
      assert.equal(result.kind, 'done', JSON.stringify(result));
      assert.equal(lines(starts), 1, 'the tool ran again');
      assert.equal(repeatedFinished(scene.model), 0, 'a finished model call was made again');
      assert.deepEqual(scene.model.requests.map((r) => [r.last, r.finished]), [['user', true], ['tool', true]]);
      const messages = history(scene);
      assert.deepEqual(messages.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
      assert.ok(JSON.stringify(messages[2]).includes(CUT_BY_WORKER), JSON.stringify(messages[2]));
    } finally {
      if (second) await killHard(second.child);
    }
  });
});
