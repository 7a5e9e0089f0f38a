import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { createChangeWatcher } from '../../../src/checkpoints/watcher';

test('change watcher: dirty until armed; any change, in old or new folders, makes it dirty; .legion/ and ignored folders do not', () =>
  withTempDir(async (root) => {
    await mkdir(join(root, 'src'));
    await mkdir(join(root, '.legion', 'runs'), { recursive: true });
    await mkdir(join(root, 'build'));
    const watcher = createChangeWatcher({ root, ignoredDirs: new Set(['build']) });
    try {
      assert.equal(await watcher.clean(), false, 'never armed: unknown');
      watcher.arm();
      assert.equal(await watcher.clean(), true);
      await writeFile(join(root, '.legion', 'runs', 'events.jsonl'), 'x');
      await writeFile(join(root, 'build', 'out.js'), 'x');
      assert.equal(await watcher.clean(), true, '.legion/ and ignored folders are not watched');
      await writeFile(join(root, 'src', 'a.ts'), 'x');
      assert.equal(await watcher.clean(), false, 'a write was seen without waiting');
      watcher.arm();
      await mkdir(join(root, 'src', 'deep'));
      assert.equal(await watcher.clean(), false);
      watcher.arm();
      await writeFile(join(root, 'src', 'deep', 'b.ts'), 'x');
      assert.equal(await watcher.clean(), false, 'a folder created since is watched too');
      watcher.arm();
      await rm(join(root, 'src', 'a.ts'));
      assert.equal(await watcher.clean(), false);
      watcher.arm();
      await writeFile(join(root, '.gitignore'), 'build/\n');
      assert.equal(await watcher.clean(), false);
      watcher.arm();
      assert.equal(await watcher.clean(), false, 'a .gitignore change retires the detector for good (git decides from then on)');
    } finally {
      watcher.close();
    }
  }));

test('change watcher: past its folder limit it gives up and always says dirty', () =>
  withTempDir(async (root) => {
    for (let i = 0; i < 5; i++) await mkdir(join(root, `d${i}`));
    const watcher = createChangeWatcher({ root, ignoredDirs: new Set(), maxDirs: 3 });
    try {
      watcher.arm();
      assert.equal(await watcher.clean(), false);
    } finally {
      watcher.close();
    }
  }));
