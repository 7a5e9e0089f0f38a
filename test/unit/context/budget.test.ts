import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { budgetInput, budgetText, limitOf, reachedBudget } from '../../../src/context/budget';

const none = { runUsd: 0, sessionUsd: 0, turnTokens: 0 };

test('budgets: off unless set; run, then session, then turn; raises lift the limit by raiseBy × configured', () => {
  assert.equal(reachedBudget({ raiseBy: 1 }, { runUsd: 99, sessionUsd: 99, turnTokens: 1e9 }, none), null);
  const s = { runUsd: 1, sessionUsd: 0.5, turnTokens: 1000, raiseBy: 1 };
  assert.deepEqual(reachedBudget(s, { runUsd: 1.2, sessionUsd: 0.6, turnTokens: 5000 }, none), { budget: 'runUsd', spent: 1.2, limit: 1, raiseBy: 1 });
  assert.equal(reachedBudget(s, { runUsd: 1.2, sessionUsd: 0.4, turnTokens: 10 }, { ...none, runUsd: 1 })?.budget ?? null, null);
  assert.equal(reachedBudget(s, { runUsd: 0.1, sessionUsd: 0.1, turnTokens: 1000 }, none)?.budget, 'turnTokens');
  assert.equal(limitOf(1000, 0.5, 2), 2000);
  // Unknown prices reach no dollar budget (tokens still count).
  assert.equal(reachedBudget(s, { runUsd: null, sessionUsd: null, turnTokens: 10 }, none), null);
});

test('budgets: the request input and the one-line text', () => {
  const r = { budget: 'turnTokens' as const, spent: 1200, limit: 1000, raiseBy: 1000 };
  assert.deepEqual(budgetInput(r), { budget: 'turnTokens', tokens: 1200, limit: 1000, raiseBy: 1000 });
  assert.equal(budgetText(r), 'budget reached: budgets.turnTokens (1200 tokens of 1000 tokens); approve to raise it by 1000 tokens, reject to end the turn');
  assert.deepEqual(budgetInput({ budget: 'runUsd', spent: 0.123456, limit: 0.1, raiseBy: 0.1 }), { budget: 'runUsd', spentUsd: 0.1235, limit: 0.1, raiseBy: 0.1 });
});
