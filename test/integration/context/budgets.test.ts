import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startAppHarness } from '../../helpers/app-harness';
import { assertAllValid, eventsOf } from '../../helpers/runtime-assert';
import { withTempDir } from '../../helpers/tmp';
import { recordingFaux } from './helpers';

/** A turn of many tool calls: `budgets.turnTokens` is reached partway. */
const SCRIPT = `
replies:
  - { agent: worker, on: message, toolCalls: [{ name: list_participants, input: {} }] }
  - { agent: worker, on: tool-result, repeat: true, text: "still going", toolCalls: [{ name: list_participants, input: {} }], usage: { inputTokens: 400, outputTokens: 100 } }
`;
const WORKER = { id: 'worker', tools: ['list_participants'] };
const CONFIG = { budgets: { turnTokens: 1000, raiseBy: 1 }, runtime: { maxIterations: 6 } };

test('budget reached (interactive): a "budget" request in the ordinary queue; approve raises the limit, reject ends the turn', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({ dir, agents: [WORKER], provider: recordingFaux(SCRIPT), config: CONFIG });
    const sent = h.core.send('worker', 'go');
    assert.ok(sent.ok);
    const first = await h.waitFor((e) => e.type === 'approval-request' && e.toolName === 'budget', 10_000);
    assert.ok(first.type === 'approval-request');
    assert.equal(first.approverId, 'user');
    assert.deepEqual(first.input, { budget: 'turnTokens', tokens: (first.input as { tokens: number }).tokens, limit: 1000, raiseBy: 1000 });
    assert.ok((first.input as { tokens: number }).tokens >= 1000);
    assert.deepEqual(h.core.pendingApprovals().map((p) => p.toolName), ['budget']);
    h.core.resolveApprovals([first.requestId], 'approved');
    const second = await h.waitFor((e) => e.type === 'approval-request' && e.toolName === 'budget' && e.requestId !== first.requestId, 10_000);
    assert.ok(second.type === 'approval-request');
    assert.equal((second.input as { limit: number }).limit, 2000, 'approving raised the limit by raiseBy × 1000');
    h.core.resolveApprovals([second.requestId], 'rejected');
    await h.core.idle(sent.sessionId);
    const outcome = h.core.lastOutcome(sent.sessionId);
    assert.ok(outcome?.kind === 'failed' && /^budget reached: budgets\.turnTokens .*: rejected$/.test(outcome.error), JSON.stringify(outcome));
    // Persisted like every request: both are in the approvals file with their decisions.
    assert.deepEqual(h.approvals.records().filter((r) => r.request.toolName === 'budget').map((r) => r.outcome?.decision), ['approved', 'rejected']);
    assertAllValid(h.core);
    await h.close();
  });
});

test('budget reached headless: rejected at once (decidedBy headless), the turn ends with the budget error', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({ dir, agents: [WORKER], provider: recordingFaux(SCRIPT), config: CONFIG, headless: { approve: 'all' } });
    const sent = h.core.send('worker', 'go');
    assert.ok(sent.ok);
    await h.core.idle(sent.sessionId);
    const outcome = h.core.lastOutcome(sent.sessionId);
    assert.ok(outcome?.kind === 'failed' && outcome.error.startsWith('budget reached: budgets.turnTokens'), JSON.stringify(outcome));
    const resolved = eventsOf(h.events, 'approval-resolve');
    assert.equal(resolved.at(-1)?.decidedBy, 'headless');
    assert.equal(resolved.at(-1)?.decision, 'rejected');
    assertAllValid(h.core);
    await h.close();
  });
});
