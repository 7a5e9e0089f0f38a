import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { composeCheckpoints } from '../../../src/cli/compose-checkpoints';
import { configSchema } from '../../../src/config/schema';
import { createBus } from '../../../src/events/bus';
import type { LegionEvent } from '../../../src/events/types';
import { withTempDir } from '../../helpers/tmp';
import { put } from './helpers';

/** Undo's view of a core with no session to tell. */
const NO_CORE = { isBusy: () => false, appendNote: () => false };


function compose(root: string, enabled = true) {
  const bus = createBus({ runId: 'run-1' });
  const events: LegionEvent[] = [];
  bus.subscribeAll((e) => events.push(e));
  const parts = composeCheckpoints({
    config: configSchema().parse({ checkpoints: { enabled } }), workspaceRoot: root, worktreesDir: join(root, '.legion', 'worktrees'), runId: 'run-1', bus,
    clock: () => new Date('2026-11-23T00:00:00Z'),
  });
  return { parts, events };
}

const batch = { sessionId: 'session-user__scribe__default', participantId: 'scribe', messages: [], calls: [{ toolUseId: 'tu-1', name: 'file_write', changesFiles: true }] };

test('checkpoints: composing opens nothing; the first batch opens the shadow repository and is checkpointed; undo sees it', async () => {
  await withTempDir(async (root) => {
    await put(root, 'a.txt', 'one\n');
    const { parts, events } = compose(root);
    assert.ok(parts);
    assert.equal(existsSync(join(root, '.legion', 'checkpoints')), false, 'nothing made at compose time');
    const finish = await parts.beforeBatch(batch);
    assert.ok(finish, 'the batch got a checkpoint');
    assert.ok(existsSync(join(root, '.legion', 'checkpoints', 'git', 'HEAD')));
    await put(root, 'a.txt', 'two\n');
    await finish();
    const made = events.filter((e) => e.type === 'checkpoint');
    assert.equal(made.length, 2);
    assert.deepEqual(made[1]?.type === 'checkpoint' ? made[1].files : undefined, ['a.txt']);
    const listed = await parts.undoFor(NO_CORE).list();
    assert.equal(listed.length, 1);
    parts.close();
  });
});

test('checkpoints: start() opens in the background once; a store that cannot open is said once and batches run without one', async () => {
  await withTempDir(async (root) => {
    const { parts } = compose(root);
    await Promise.all([parts!.start(), parts!.start()]);
    assert.ok(existsSync(join(root, '.legion', 'checkpoints', 'git', 'HEAD')));
    parts!.close();
  });
  await withTempDir(async (root) => {
    await put(root, '.legion', 'a file where the folder should be\n');
    const { parts, events } = compose(root);
    assert.equal(await parts!.beforeBatch(batch), undefined);
    assert.equal(await parts!.beforeBatch(batch), undefined);
    const notices = events.filter((e) => e.type === 'notice' && /checkpoints are off for this run/.test(e.message));
    assert.equal(notices.length, 1);
    await assert.rejects(parts!.undoFor(NO_CORE).list(), /checkpoints are off for this run/);
    const preview = await parts!.undoFor(NO_CORE).preview({});
    assert.equal(preview.ok, false);
  });
  await withTempDir(async (root) => {
    assert.equal(compose(root, false).parts, undefined);
  });
});
