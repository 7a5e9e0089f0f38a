import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sessionIdOf } from '../../../src/session/ids';
import { layoutFor } from '../../../src/storage/layout';
import { restateServerBinary, freePort } from '../../../src/engine/local-engine';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { killHard, sendTurn, startEngineScene, startWorker } from '../../helpers/engine-fixture';

/**
 * A worker keeps the run's core between turns (docs/engine.md#a-turn-on-a-worker) and builds it
 * afresh when the session file changed elsewhere: a turn of the session that ran on another
 * worker must be in the history the next turn sends to the model.
 */
const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

test('a worker reuses its core between turns, and rebuilds it when the session file was written elsewhere', { skip, timeout: 240_000 }, async () => {
  await withTempDir(async (dir) => {
    const { model, engine, env, run, sessionId } = await startEngineScene(dir, { answerChunks: 2, delayMs: 0 });
    const worker = await startWorker(dir, { ...env, LEGION_ENGINE_TIMING: '1' }, await freePort());
    const turn = async (text: string): Promise<void> => {
      // A turn takes seconds; one without an outcome fails here with the worker's log (below), not at the test's timeout without it.
      const outcome = await sendTurn(engine.ingress, sessionId, { runId: run.id, responderId: 'builder', name: 'default', text }, 45_000) as { kind: string };
      assert.equal(outcome.kind, 'done', JSON.stringify(outcome));
    };
    const sentWith = (text: string): string => model.requests.filter((r) => r.last === 'user' && r.history.includes(text)).at(-1)!.history;
    const cores = (): string[] => worker.log.join('').split('\n').filter((l) => l.includes(`turn ${sessionId}:`)).map((l) => / core (kept|built)/.exec(l)![1]!);
    try {
      await turn('first');
      await turn('second');
      assert.match(sentWith('second'), /first/);
      // Another worker's turn of this session: its user message and answer appended to the projection.
      const file = layoutFor(dir).sessionFile(run.id, sessionId);
      const lines = readFileSync(file, 'utf8').trim().split('\n');
      const user = lines[0]!.replace('first', 'ran elsewhere');
      const answer = lines.at(-1)!.replace(/piece 0\./, 'answered elsewhere.');
      assert.notEqual(answer, lines.at(-1));
      appendFileSync(file, `${user}\n${answer}\n`);
      await turn('third');
      const third = sentWith('third');
      assert.match(third, /ran elsewhere/, 'the worker sent a history without the turn that ran elsewhere');
      assert.match(third, /answered elsewhere/);
      await turn('fourth');
      assert.match(sentWith('fourth'), /third/);
      assert.equal(readFileSync(file, 'utf8').trim().split('\n').length, 4 * 4 + 2);
      assert.deepEqual(cores(), ['built', 'kept', 'built', 'kept']);
    } catch (error) {
      const engineLog = existsSync(join(dir, 'engine.log')) ? readFileSync(join(dir, 'engine.log'), 'utf8').split('\n').slice(-40).join('\n') : '';
      throw new Error(`${(error as Error).message}\nworker log:\n${worker.log.join('')}\nmodel requests: ${model.requests.map((r) => r.history).join('\n')}\nengine log (end):\n${engineLog}`);
    } finally {
      await killHard(worker.child);
      try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
      await model.close();
    }
  });
});

test('a kept core reads the hub\'s usage totals at each turn: usage.json rewritten does not rebuild it, and a run budget it reached stops the next call', { skip, timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const { model, engine, env, run, sessionId } = await startEngineScene(dir, { answerChunks: 2, delayMs: 0 });
    appendFileSync(join(dir, '.legion', 'config.yaml'), 'budgets: { runUsd: 1 }\n');
    const worker = await startWorker(dir, { ...env, LEGION_ENGINE_TIMING: '1' }, await freePort());
    const send = (text: string): Promise<unknown> => sendTurn(engine.ingress, sessionId, { runId: run.id, responderId: 'builder', name: 'default', text });
    const cores = (): string[] => worker.log.join('').split('\n').filter((l) => l.includes(`turn ${sessionId}:`)).map((l) => / core (kept|built)/.exec(l)![1]!);
    // What the hub writes after it counted usage (src/runtime/usage-book.ts).
    const hubWrites = (costUsd: number): void => {
      const totals = { calls: 2, inputTokens: 20, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd, partial: false, unpricedModels: [] };
      writeFileSync(layoutFor(dir).usage(run.id), JSON.stringify({ version: 1, run: totals, sessions: { [sessionId]: totals } }));
    };
    let last: Promise<unknown> | undefined;
    try {
      assert.equal((await send('first') as { kind: string }).kind, 'done');
      hubWrites(0.5);
      assert.equal((await send('second') as { kind: string }).kind, 'done');
      assert.deepEqual(cores(), ['built', 'kept'], 'usage.json rewritten by the hub rebuilt the core');
      // Over the run's budget: the kept core's gate sees it before the model is asked.
      hubWrites(10);
      last = send('third').catch(() => undefined);
      const approvals = layoutFor(dir).approvals(run.id);
      await until(() => existsSync(approvals) && readFileSync(approvals, 'utf8').includes('"toolName":"budget"'), 'the budget request raised', 30_000, 20);
      assert.equal(model.requests.filter((r) => r.history.includes('third')).length, 0, 'the model was asked over budget');
    } catch (error) {
      throw new Error(`${(error as Error).message}\nworker log:\n${worker.log.join('')}`);
    } finally {
      await killHard(worker.child);
      try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
      await last;
      await model.close();
    }
  });
});

test('turns of several sessions of a run at once share the worker\'s one core (built once), each journaled in its own invocation', { skip, timeout: 90_000 }, async () => {
  await withTempDir(async (dir) => {
    const { model, engine, env, run } = await startEngineScene(dir, { answerChunks: 5, delayMs: 20 });
    const worker = await startWorker(dir, { ...env, LEGION_ENGINE_TIMING: '1' }, await freePort());
    const names = ['a', 'b', 'c'];
    const round = (text: string): Promise<unknown[]> => Promise.all(names.map((name) =>
      sendTurn(engine.ingress, sessionIdOf({ initiatorId: 'user', responderId: 'builder', name }), { runId: run.id, responderId: 'builder', name, text: `${text} ${name}` })));
    const cores = (): string[] => worker.log.join('').split('\n').filter((l) => / core (kept|built)/.test(l)).map((l) => / core (kept|built)/.exec(l)![1]!);
    try {
      for (const outcome of [...await round('first'), ...await round('second')]) assert.equal((outcome as { kind: string }).kind, 'done', JSON.stringify(outcome));
      assert.deepEqual(cores().sort(), ['built', 'kept', 'kept', 'kept', 'kept', 'kept']);
      for (const name of names) {
        const file = layoutFor(dir).sessionFile(run.id, sessionIdOf({ initiatorId: 'user', responderId: 'builder', name }));
        const lines = readFileSync(file, 'utf8').trim().split('\n');
        assert.equal(lines.length, 8, `${name}: ${lines.join('\n')}`);
        assert.match(lines[0]!, new RegExp(`first ${name}`));
        assert.match(lines[4]!, new RegExp(`second ${name}`));
      }
      // Each session's second model call saw its own history only.
      for (const name of names) {
        const second = model.requests.filter((r) => r.history.includes(`second ${name}`));
        assert.ok(second.every((r) => !names.filter((n) => n !== name).some((n) => r.history.includes(`first ${n}`))), `${name} saw another session's history`);
      }
    } catch (error) {
      throw new Error(`${(error as Error).message}\nworker log:\n${worker.log.join('')}`);
    } finally {
      await killHard(worker.child);
      try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
      await model.close();
    }
  });
});
