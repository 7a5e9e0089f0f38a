import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keystrokeFigures } from '../../bench/keystrokes';
import { budgetFor, withinBudget } from '../../bench/budgets';

test('keystroke bench: a keystroke that never got a frame fails the bench instead of being dropped', () => {
  const fine = keystrokeFigures([3, 4, 5, 6]);
  assert.deepEqual(fine, { keyToFrameP95Ms: 6, keyToFrameMedianMs: 4.5, keystrokes: 4, lostKeystrokes: 0 });
  assert.equal(withinBudget(fine.keyToFrameP95Ms, budgetFor('stream.keyToFrameP95Ms')!), true);
  assert.equal(withinBudget(fine.lostKeystrokes, budgetFor('stream.lostKeystrokes')!), true);

  const lost = keystrokeFigures([3, NaN, 5, 6]);
  assert.equal(lost.lostKeystrokes, 1);
  assert.equal(lost.keystrokes, 4);
  assert.ok(Number.isNaN(lost.keyToFrameP95Ms), 'the p95 of the rest is not reported as if nothing was lost');
  assert.equal(withinBudget(lost.keyToFrameP95Ms, budgetFor('stream.keyToFrameP95Ms')!), false);
  assert.equal(withinBudget(lost.lostKeystrokes, budgetFor('stream.lostKeystrokes')!), false);
});
