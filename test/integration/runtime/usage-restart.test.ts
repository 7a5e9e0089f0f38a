import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { startAppHarness } from '../../helpers/app-harness';
import { withTempDir } from '../../helpers/tmp';
import { eventsOf } from '../../helpers/runtime-assert';

const SCRIPT = `
replies:
  - { agent: worker, when: "one", text: "first", usage: { inputTokens: 1000, outputTokens: 50, cacheReadTokens: 200 } }
  - { agent: worker, when: "two", text: "second", usage: { inputTokens: 2000, outputTokens: 70 } }
  - { agent: helper, when: "three", text: "third", usage: { inputTokens: 10, outputTokens: 5 } }
`;
const AGENTS = [{ id: 'worker', tools: [] }, { id: 'helper', tools: [] }];
/** `.legion/models.yaml`: $1 per million input and output tokens (cache reads and writes free). */
const PRICE = { faux: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 } };

async function turn(h: Awaited<ReturnType<typeof startAppHarness>>, to: string, text: string): Promise<string> {
  const sent = h.core.send(to, text);
  assert.ok(sent.ok);
  await h.core.idle(sent.sessionId);
  return sent.sessionId;
}

test('usage totals survive a restart: per session and per run, counted on from where they were', async () => {
  await withTempDir(async (dir) => {
    const first = await startAppHarness({ dir, agents: AGENTS, script: SCRIPT, models: PRICE });
    assert.deepEqual(first.core.usage().run.calls, 0);
    const worker = await turn(first, 'worker', 'one');
    const before = first.core.usage();
    assert.equal(before.run.inputTokens, 1000);
    assert.equal(before.sessions[worker]?.cacheReadTokens, 200);
    await first.close('quit');
    const file = JSON.parse(await readFile(first.layout.usage(first.core.runId), 'utf8'));
    assert.equal(file.version, 1);
    assert.deepEqual(file.run, before.run);

    const second = await startAppHarness({ dir, script: SCRIPT, models: PRICE });
    assert.equal(second.core.runId, first.core.runId);
    assert.deepEqual(second.core.usage(), before, 'read back as it was');
    await turn(second, 'worker', 'two');
    const helper = await turn(second, 'helper', 'three');
    const after = second.core.usage();
    assert.deepEqual(
      { calls: after.run.calls, input: after.run.inputTokens, output: after.run.outputTokens, cache: after.run.cacheReadTokens },
      { calls: 3, input: 3010, output: 125, cache: 200 },
    );
    assert.ok(Math.abs((after.run.costUsd ?? 0) - 3135 / 1e6) < 1e-12, String(after.run.costUsd));
    assert.equal(after.run.partial, false);
    assert.equal(after.sessions[worker]?.calls, 2);
    assert.equal(after.sessions[worker]?.inputTokens, 3000);
    assert.equal(after.sessions[helper]?.inputTokens, 10);
    await second.close('quit');

    const third = await startAppHarness({ dir, script: SCRIPT, models: PRICE });
    assert.deepEqual(third.core.usage(), after, 'and again after the second restart');
    await third.close();
  });
});

test('usage.json is written while the run goes on (within a second of a model call), not only at shutdown', async () => {
  await withTempDir(async (dir) => {
    // A model no price table lists (config/models.yaml prices `faux` at $0).
    const h = await startAppHarness({ dir, agents: AGENTS, script: SCRIPT, model: 'local-model' });
    try {
      await turn(h, 'worker', 'one');
      const file = h.layout.usage(h.core.runId);
      const until = Date.now() + 4000;
      let saved: { run?: { inputTokens?: number; partial?: boolean } } | null = null;
      while (Date.now() < until) {
        saved = await readFile(file, 'utf8').then((t) => JSON.parse(t), () => null);
        if (saved) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(saved?.run?.inputTokens, 1000, 'on disk before shutdown');
      assert.equal(saved?.run?.partial, true, 'no price known: the cost is a lower bound');
    } finally {
      await h.close();
    }
  });
});

test('a damaged usage.json: a notice, totals start again from zero, histories are untouched, the file is whole again after', async () => {
  await withTempDir(async (dir) => {
    const first = await startAppHarness({ dir, agents: AGENTS, script: SCRIPT });
    const worker = await turn(first, 'worker', 'one');
    await first.close();
    const file = first.layout.usage(first.core.runId);
    let messages = 2;
    for (const damage of ['{"version": 1, "run": {', JSON.stringify({ version: 1, run: { calls: -1 }, sessions: {} })]) {
      await writeFile(file, damage);
      const second = await startAppHarness({ dir, script: SCRIPT });
      const notices = eventsOf(second.events, 'notice').map((n) => n.message);
      assert.ok(notices.some((m) => m.includes('usage.json is damaged') && m.endsWith('token and cost totals start again from zero')), notices.join('\n'));
      assert.equal(second.core.usage().run.calls, 0);
      assert.deepEqual(second.core.sessions().map((s) => [s.id, s.messageCount]), [[worker, messages]], 'the history is all there');
      await turn(second, 'worker', 'two');
      messages += 2;
      await second.close();
      const saved = JSON.parse(await readFile(file, 'utf8'));
      assert.equal(saved.run.inputTokens, 2000, 'counted again from zero, and written whole');
    }
  });
});
