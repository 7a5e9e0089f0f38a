import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { createChangeWatcher } from '../../../src/checkpoints/watcher';
import { takeSnapshot } from '../../../src/checkpoints/snapshot';
import { checkpointPaths, ensureShadowRepo } from '../../../src/checkpoints/shadow-repo';
import { openStore, put, subject } from './helpers';

/** A shadow repository with a first full snapshot of `root`. */
async function shadow(root: string) {
  const paths = checkpointPaths(root);
  await mkdir(paths.dir, { recursive: true });
  await ensureShadowRepo(paths);
  const first = await takeSnapshot(paths, { maxFileBytes: 1_000_000 });
  return { paths, first };
}

test('change watcher: lists the paths changed since arm(); unknown before the first arm, past its path or event limit', () =>
  withTempDir(async (root) => {
    await mkdir(join(root, 'src'));
    await mkdir(join(root, 'build'));
    const watcher = createChangeWatcher({ root, ignoredDirs: new Set(['build']), maxPaths: 3 });
    try {
      assert.equal(await watcher.changes(), undefined, 'never armed: unknown');
      watcher.arm();
      assert.deepEqual(await watcher.changes(), new Set());
      await writeFile(join(root, 'src', 'a.ts'), 'x');
      await writeFile(join(root, 'build', 'out.js'), 'x');
      await mkdir(join(root, 'src', 'deep'));
      await writeFile(join(root, 'src', 'deep', 'b.ts'), 'x');
      assert.deepEqual([...(await watcher.changes())!].sort(), ['src/a.ts', 'src/deep', 'src/deep/b.ts']);
      watcher.arm();
      await rm(join(root, 'src', 'a.ts'));
      assert.deepEqual([...(await watcher.changes())!], ['src/a.ts'], 'a deletion is a change of its path');
      for (const name of ['p', 'q', 'r']) await writeFile(join(root, name), 'x');
      assert.equal(await watcher.changes(), undefined, 'more paths than maxPaths: unknown');
      watcher.arm();
      assert.deepEqual(await watcher.changes(), new Set(), 'armed again: known again');
    } finally {
      watcher.close();
    }
    const busy = createChangeWatcher({ root, ignoredDirs: new Set(), maxEvents: 5 });
    try {
      busy.arm();
      for (let i = 0; i < 10; i++) await writeFile(join(root, 'src', 'same.ts'), `write ${i}`);
      assert.equal(await busy.changes(), undefined, 'more events than maxEvents (the kernel queue could drop some): unknown');
    } finally {
      busy.close();
    }
  }));

test('snapshot of the listed paths only: git looks at nothing else, and with the full list the tree is the full scan\'s', () =>
  withTempDir(async (root) => {
    await put(root, '.gitignore', '*.log\n');
    await put(root, 'a/one.txt', 'one\n');
    await put(root, 'a/two.txt', 'two\n');
    await put(root, 'b/three.txt', 'three\n');
    await put(root, 'b/sub/four.txt', 'four\n');
    await put(root, 'top.txt', 'top\n');
    const { paths, first } = await shadow(root);
    await put(root, 'a/one.txt', 'ONE\n');
    await put(root, 'b/three.txt', 'THREE\n');
    // Only a/one.txt listed: b/three.txt's change is not looked at (proves the list limits git).
    const partial = await takeSnapshot(paths, { maxFileBytes: 1_000_000, previousTree: first.tree, only: new Set(['a/one.txt']) });
    assert.equal(partial.scope, 'changed');
    assert.deepEqual(partial.changes.map((c) => c.path), ['a/one.txt']);
    // Everything that can happen to a path: edit, new folder with files, deletion of a file and of a
    // folder, a rename, a file made and removed between two snapshots, an ignored file, an executable bit.
    await put(root, 'new/deep/five.txt', 'five\n');
    await rm(join(root, 'a', 'two.txt'));
    await rm(join(root, 'b', 'sub'), { recursive: true });
    await rename(join(root, 'a', 'one.txt'), join(root, 'new', 'moved.txt'));
    await put(root, 'a/flash.txt', 'gone soon\n');
    await rm(join(root, 'a', 'flash.txt'));
    await put(root, 'a/debug.log', 'ignored\n');
    await put(root, 'a/run.sh', '#!/bin/sh\n', 0o755);
    const listed = new Set(['b/three.txt', 'new', 'new/deep', 'new/deep/five.txt', 'a/two.txt', 'b/sub', 'a/one.txt', 'new/moved.txt', 'a/flash.txt', 'a/debug.log', 'a/run.sh']);
    const viaList = await takeSnapshot(paths, { maxFileBytes: 1_000_000, previousTree: partial.tree, only: listed });
    assert.equal(viaList.scope, 'changed');
    const full = await takeSnapshot(paths, { maxFileBytes: 1_000_000, previousTree: partial.tree });
    assert.equal(full.scope, 'all');
    assert.equal(viaList.tree, full.tree, 'the listed snapshot is the full one');
    assert.deepEqual(viaList.changes.map((c) => `${c.status} ${c.path}`).sort(), [
      'A a/run.sh', 'A new/deep/five.txt', 'A new/moved.txt', 'D a/one.txt', 'D a/two.txt', 'D b/sub/four.txt', 'M b/three.txt',
    ]);
  }));

test('snapshot of a list git refuses, or whose gone path leaves only the workspace itself, scans everything', () =>
  withTempDir(async (root) => {
    await put(root, 'a/one.txt', 'one\n');
    await put(root, 'top.txt', 'top\n');
    const { paths, first } = await shadow(root);
    await rm(join(root, 'top.txt'));
    await put(root, 'a/one.txt', 'ONE\n');
    const shot = await takeSnapshot(paths, { maxFileBytes: 1_000_000, previousTree: first.tree, only: new Set(['top.txt']) });
    assert.equal(shot.scope, 'all', 'a path gone from the workspace root: its folder is the whole tree');
    assert.deepEqual(shot.changes.map((c) => `${c.status} ${c.path}`).sort(), ['D top.txt', 'M a/one.txt']);
  }));

test('the store snapshots what its watcher saw change, and its trees equal full scans, batch after batch', () =>
  withTempDir(async (root) => {
    for (let d = 0; d < 5; d++) for (let f = 0; f < 5; f++) await put(root, `d${d}/f${f}.txt`, `${d}/${f}\n`);
    await put(root, '.gitignore', 'out/\n*.tmp\n');
    const store = await openStore(root, { watch: true });
    assert.equal(await store.whenWatching, true);
    try {
      const steps: (() => Promise<void>)[] = [
        () => put(root, 'd1/f1.txt', 'changed\n'),
        () => rm(join(root, 'd2'), { recursive: true }),
        async () => { await mkdir(join(root, 'd2')); await put(root, 'd2/again.txt', 'back\n'); },
        () => put(root, 'out/build.js', 'ignored folder\n'),
        () => put(root, 'd3/x.tmp', 'ignored file\n'),
        () => rename(join(root, 'd4'), join(root, 'd9')),
        () => put(root, 'root-file.txt', 'at the top\n'),
      ];
      for (const step of steps) {
        await step();
        const open = await store.begin(subject());
        const full = await store.lock.run(() => store.snapshotLocked());
        assert.equal(open.tree, full, `after step ${steps.indexOf(step)}`);
        await open.finish();
      }
    } finally {
      store.close();
    }
  }));
