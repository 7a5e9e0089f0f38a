import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createUsageAccumulator, formatCost, formatTokens, formatUsd, EMPTY_TOTALS } from '../../../src/providers/usage-totals';

const rec = (sessionId: string, model: string, costUsd: number | null, tokens = 100) => ({
  sessionId, model, inputTokens: tokens, outputTokens: tokens / 2, cacheReadTokens: 10, cacheWriteTokens: 5, costUsd,
});

test('totals per session and per run add up', () => {
  const acc = createUsageAccumulator();
  acc.add(rec('s1', 'claude-haiku-4-5', 0.01));
  acc.add(rec('s1', 'claude-haiku-4-5', 0.02));
  acc.add({ ...rec('s2', 'gpt-4.1', 0.5), type: 'usage', seq: 3, participantId: 'x' } as ReturnType<typeof rec>);
  const s1 = acc.session('s1');
  assert.equal(s1.calls, 2);
  assert.equal(s1.inputTokens, 200);
  assert.equal(s1.outputTokens, 100);
  assert.equal(s1.cacheReadTokens, 20);
  assert.equal(s1.cacheWriteTokens, 10);
  assert.ok(Math.abs(s1.costUsd! - 0.03) < 1e-12);
  assert.equal(s1.partial, false);
  const run = acc.run();
  assert.equal(run.calls, 3);
  assert.ok(Math.abs(run.costUsd! - 0.53) < 1e-12);
  assert.deepEqual([...acc.sessions().keys()], ['s1', 's2']);
  assert.deepEqual(acc.session('nope'), EMPTY_TOTALS);
});

test('an unknown price makes the total partial, never zero', () => {
  const acc = createUsageAccumulator();
  acc.add(rec('s', 'llama3.1', null));
  assert.equal(acc.run().costUsd, null, 'nothing priced: unknown');
  assert.equal(formatCost(acc.run()), 'cost unknown');
  acc.add(rec('s', 'gpt-4.1', 0.25));
  acc.add(rec('s', 'llama3.1', null));
  assert.equal(acc.run().costUsd, 0.25);
  assert.equal(acc.run().partial, true);
  assert.deepEqual(acc.run().unpricedModels, ['llama3.1']);
  assert.equal(formatCost(acc.run()), '≥ $0.25');
});

test('formatting', () => {
  assert.equal(formatCost(EMPTY_TOTALS), '$0');
  assert.equal(formatUsd(0.0042), '$0.0042');
  assert.equal(formatUsd(1.5), '$1.50');
  assert.equal(formatUsd(1234.4), '$1234');
  assert.equal(formatTokens(999), '999');
  assert.equal(formatTokens(1234), '1.2k');
  assert.equal(formatTokens(45_600), '46k');
  assert.equal(formatTokens(2_500_000), '2.5M');
});
