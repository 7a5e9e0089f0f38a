import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startAppHarness } from '../../helpers/app-harness';
import { assertAllValid, eventsOf } from '../../helpers/runtime-assert';
import { withTempDir } from '../../helpers/tmp';
import { recordingFaux } from './helpers';

/**
 * docs/context.md, "Budgets": a model without a price (here `local-model`, which no price
 * table lists, as for a local model) has no dollar cost, so a dollar budget cannot see its calls: a warning in the
 * session's lane says so, once per session, naming the model; no budget request is raised for
 * dollars that were never counted. Without a dollar budget there is nothing to warn about.
 */
const SCRIPT = `
replies:
  - { agent: worker, on: message, repeat: true, toolCalls: [{ name: list_participants, input: {} }], usage: { inputTokens: 50000, outputTokens: 20000 } }
  - { agent: worker, on: tool-result, repeat: true, text: "done", usage: { inputTokens: 50000, outputTokens: 20000 } }
`;
const WORKER = { id: 'worker', tools: ['list_participants'] };

const priceWarnings = (events: Parameters<typeof eventsOf>[0]) =>
  eventsOf(events, 'notice').filter((n) => /have no known price: dollar budgets do not count them/.test(n.message));

test('a dollar budget with an unpriced model: one warning per session naming the model; no dollar budget request', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({ dir, agents: [WORKER], provider: recordingFaux(SCRIPT), model: 'local-model', config: { budgets: { sessionUsd: 0.01, runUsd: 0.01 } } });
    try {
      const first = h.core.send('worker', 'go');
      assert.ok(first.ok);
      assert.equal(await h.core.idle(first.sessionId), 'done');
      const again = h.core.send('worker', 'and again');
      assert.ok(again.ok);
      assert.equal(await h.core.idle(again.sessionId), 'done');
      const third = h.core.send('worker', 'in another session', 'second');
      assert.ok(third.ok);
      await h.core.idle(third.sessionId);

      const warnings = priceWarnings(h.events);
      const bySession = new Map<string, number>();
      for (const w of warnings) bySession.set(w.sessionId ?? '', (bySession.get(w.sessionId ?? '') ?? 0) + 1);
      assert.equal(bySession.get(first.sessionId), 1, 'once for the first session, however many calls');
      assert.equal(warnings[0]!.level, 'warn');
      assert.match(warnings[0]!.message, /calls to local-model have no known price/);
      assert.match(warnings[0]!.message, /budgets\.turnTokens/);
      assert.notEqual(third.sessionId, first.sessionId);
      assert.equal(bySession.get(third.sessionId), 1, 'and once for another session');
      assert.ok(!h.events.some((e) => e.type === 'approval-request' && e.toolName === 'budget'), 'unpriced calls reach no dollar budget');
      assertAllValid(h.core);
    } finally {
      await h.close();
    }
  });
});

test('no dollar budget (tokens only, or none): no price warning', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({ dir, agents: [WORKER], provider: recordingFaux(SCRIPT), model: 'local-model', config: { budgets: { turnTokens: 10_000_000 } } });
    try {
      const sent = h.core.send('worker', 'go');
      assert.ok(sent.ok);
      assert.equal(await h.core.idle(sent.sessionId), 'done');
      assert.deepEqual(priceWarnings(h.events), []);
    } finally {
      await h.close();
    }
  });
});
