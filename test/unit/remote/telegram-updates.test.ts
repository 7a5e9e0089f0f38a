import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseUpdateBatch } from '../../../src/remote/telegram/updates';

/** The getUpdates result as the Telegram poll loop takes it (docs/remote.md#telegram): update_id checked, the offset always moved past the batch. */

test('telegram updates: update_id must be a safe nonnegative integer; the next offset is past the largest valid one; ids already seen are not fresh', () => {
  const batch = parseUpdateBatch([{ update_id: 7 }, { update_id: 2 ** 60 }, { update_id: 1.5 }, { update_id: -3 }, { update_id: '9' }, {}, null, { update_id: 5 }, { update_id: 9 }], 6);
  assert.equal(batch.kind, 'batch');
  if (batch.kind !== 'batch') return;
  assert.deepEqual(batch.fresh.map((f) => f.id), [7, 9]);
  assert.equal(batch.badIds, 6);
  assert.equal(batch.next, 10);
  assert.deepEqual(parseUpdateBatch([], 4), { kind: 'batch', fresh: [], badIds: 0, next: 4 });
});

test('telegram updates: nothing to move the offset past is "stuck", never a batch to poll again at once', () => {
  assert.deepEqual(parseUpdateBatch({ not: 'a list' }, 0), { kind: 'stuck', problem: 'the result is not a list of updates' });
  assert.deepEqual(parseUpdateBatch([{ update_id: Number.MAX_SAFE_INTEGER + 2 }], 0), { kind: 'stuck', problem: '1 update without a valid update_id' });
  assert.deepEqual(parseUpdateBatch([{ update_id: 3 }], 4), { kind: 'stuck', problem: 'only updates already seen' });
});
