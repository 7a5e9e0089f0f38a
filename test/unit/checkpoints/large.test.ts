import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, rm, writeFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { applyUndo, pickCheckpoint, planUndoTo } from '../../../src/checkpoints/undo';
import { pruneCheckpoints } from '../../../src/checkpoints/prune';
import { openStore, subject } from './helpers';

test('a workspace of 10,000 files: a handful changed are found and undone; the watcher skips git when nothing changed', { timeout: 300_000 }, () =>
  withTempDir(async (root) => {
    for (let d = 0; d < 100; d++) {
      await mkdir(join(root, `d${d}`));
      await Promise.all(Array.from({ length: 100 }, (_, f) => writeFile(join(root, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`)));
    }
    const store = await openStore(root, { watch: true });
    assert.equal(await store.whenWatching, true);
    const first = await store.begin(subject());
    await first.finish();
    const open = await store.begin(subject());
    assert.equal(open.tree, first.tree, 'nothing changed: same tree');
    await writeFile(join(root, 'd3/f7.txt'), 'changed\n');
    await rm(join(root, 'd50/f50.txt'));
    await mkdir(join(root, 'd99/new'));
    await writeFile(join(root, 'd99/new/n.txt'), 'new\n');
    const files = await open.finish();
    assert.deepEqual(files.map((f) => `${f.status} ${f.path}`), ['M d3/f7.txt', 'D d50/f50.txt', 'A d99/new/n.txt']);
    // A change inside the directory created during the batch is still seen (its watch was added).
    const next = await store.begin(subject());
    await writeFile(join(root, 'd99/new/n.txt'), 'again\n');
    assert.deepEqual((await next.finish()).map((f) => f.path), ['d99/new/n.txt']);
    const target = pickCheckpoint(await store.list(), { id: open.id });
    assert.ok(typeof target !== 'string');
    const plan = await planUndoTo(store, target);
    const outcome = await applyUndo(store, plan, { runId: 'run-1', includeConflicts: false });
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.equal(await readFile(join(root, 'd3/f7.txt'), 'utf8'), 'file 3/7\n');
    assert.equal(await readFile(join(root, 'd50/f50.txt'), 'utf8'), 'file 50/50\n');
    await assert.rejects(readFile(join(root, 'd99/new/n.txt')));
    const pruned = await pruneCheckpoints(store, { keepDays: 30, maxRepoBytes: 1e9 }, new Date());
    assert.equal(pruned.removed, 0);
    store.close();
  }));

test('prune drops checkpoints past the age limit, keeps the latest, and the rest still restore', () =>
  withTempDir(async (root) => {
    await writeFile(join(root, 'a.txt'), '0');
    let now = new Date('2026-01-01T00:00:00Z');
    const { openCheckpointStore } = await import('../../../src/checkpoints/store');
    const store = await openCheckpointStore({ workspaceRoot: root, maxFileBytes: 1e6, clock: () => now });
    for (let i = 1; i <= 3; i++) {
      const open = await store.begin(subject());
      await writeFile(join(root, 'a.txt'), String(i));
      await open.finish();
      now = new Date(now.getTime() + 10 * 86_400_000);
    }
    const outcome = await pruneCheckpoints(store, { keepDays: 15, maxRepoBytes: 1e9 }, now);
    assert.equal(outcome.removed, 2);
    const left = await store.list();
    assert.equal(left.length, 1);
    const target = pickCheckpoint(left, {});
    assert.ok(typeof target !== 'string');
    const undone = await applyUndo(store, await planUndoTo(store, target), { runId: 'r', includeConflicts: false });
    assert.ok(undone.ok);
    assert.equal(await readFile(join(root, 'a.txt'), 'utf8'), '2');
    store.close();
  }));
