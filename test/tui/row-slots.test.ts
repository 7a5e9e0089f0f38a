import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RowSlots } from '../../components/lanes/row-slots';

test('a line keeps its row key while the view moves; new lines take the keys lines left behind', () => {
  const slots = new RowSlots();
  assert.deepEqual(slots.assign(['0:0', '0:1', '1:0', null]), [0, 1, 2, 3]);
  // One line streamed in: the view moves up by one; three rows keep their keys, the new line takes the freed one.
  assert.deepEqual(slots.assign(['0:1', '1:0', '1:1', '1:2']), [1, 2, 0, 3]);
  assert.deepEqual(slots.assign(['1:0', '1:1', '1:2', '2:0']), [2, 0, 3, 1]);
});

test('a different transcript (another session, a page away) takes keys 0, 1, 2… in order: rows are updated, not replaced', () => {
  const slots = new RowSlots();
  slots.assign(['5:0', '5:1', '6:0']);
  slots.assign(['5:1', '6:0', '6:1']);
  assert.deepEqual(slots.assign(['90:0', '90:1', '91:0']), [0, 1, 2]);
});

test('keys are unique and below the row count, also when the lane shrinks or an id repeats', () => {
  const slots = new RowSlots();
  slots.assign(['a', 'b', 'c', 'd', 'e']);
  const shrunk = slots.assign(['d', 'e', 'f']);
  assert.deepEqual([...shrunk].sort(), [0, 1, 2]);
  const repeated = slots.assign(['x', 'x', null, 'y']);
  assert.equal(new Set(repeated).size, 4);
  assert.ok(repeated.every((k) => k >= 0 && k < 4));
});
