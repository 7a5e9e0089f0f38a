import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { applyUndo, pickCheckpoint, planUndoTo } from '../../../src/checkpoints/undo';
import { gitText } from '../../../src/checkpoints/git';
import { openStore, put, subject } from './helpers';
import { mkdir } from 'node:fs/promises';
import { takeSnapshot } from '../../../src/checkpoints/snapshot';
import { checkpointPaths, ensureShadowRepo } from '../../../src/checkpoints/shadow-repo';

/**
 * A nested workspace (a package also opened on its own) has a `.legion/` of its own: its web
 * token and transcripts, and, once trusted, the rules honoured at its next start. Checkpoints
 * kept it (only the root's `.legion/` was left out): its secrets went into the shadow repository,
 * and an undo wrote back whatever it held when the checkpoint was taken — rules an agent wrote
 * there before you reviewed and trusted it — into the trusted folder.
 */
test('a nested workspace\'s .legion/ is never in a checkpoint, and an undo leaves it as it is', () =>
  withTempDir(async (root) => {
    await put(root, 'pkg/index.js', 'module.exports = 1;\n');
    await put(root, 'pkg/.legion/web-token', 'SECRET\n');
    await put(root, 'pkg/.legion/rules.yaml', 'version: 1\nrules:\n  - { id: all, decision: allow }\n');
    const store = await openStore(root);
    const open = await store.begin(subject());
    const listed = (await gitText(store.paths.place, ['ls-tree', '-r', '--name-only', open.tree])).trim().split('\n');
    assert.deepEqual(listed, ['pkg/index.js'], 'nothing of pkg/.legion/ in the snapshot');
    // You review pkg/.legion/ (an agent reverted its rules meanwhile, or you fixed them) and trust it.
    await writeFile(join(root, 'pkg', '.legion', 'rules.yaml'), 'version: 1\nrules: []\n');
    await writeFile(join(root, 'pkg', 'index.js'), 'module.exports = 2;\n');
    const files = await open.finish();
    assert.deepEqual(files.map((f) => `${f.status} ${f.path}`), ['M pkg/index.js']);
    const target = pickCheckpoint(await store.list(), {});
    assert.ok(typeof target !== 'string', String(target));
    const plan = await planUndoTo(store, target);
    await applyUndo(store, plan, { runId: 'run-1', includeConflicts: false });
    assert.equal(await readFile(join(root, 'pkg', 'index.js'), 'utf8'), 'module.exports = 1;\n', 'the undo ran');
    assert.equal(await readFile(join(root, 'pkg', '.legion', 'rules.yaml'), 'utf8'), 'version: 1\nrules: []\n', 'the reviewed rules stay');
    store.close();
  }));

test('a .gitignore saying !.legion/ (an agent can write one) brings no .legion/ into a checkpoint', () =>
  withTempDir(async (root) => {
    await put(root, '.gitignore', '!.legion/\n!/.legion/\n!**/.legion/**\n');
    await put(root, '.legion/rules.yaml', 'version: 1\nrules: []\n');
    await put(root, 'pkg/.legion/web-token', 'SECRET\n');
    await put(root, 'pkg/.LEGION/x', 'y\n');
    await put(root, 'pkg/index.js', 'module.exports = 1;\n');
    const store = await openStore(root);
    const open = await store.begin(subject());
    const listed = (await gitText(store.paths.place, ['ls-tree', '-r', '--name-only', open.tree])).trim().split('\n');
    assert.deepEqual(listed, ['.gitignore', 'pkg/index.js']);
    await put(root, 'pkg/.legion/web-token', 'CHANGED\n');
    await put(root, 'pkg/index.js', 'module.exports = 2;\n');
    const files = await open.finish();
    assert.deepEqual(files.map((f) => `${f.status} ${f.path}`), ['M pkg/index.js']);
    store.close();
  }));

test('a snapshot of listed changed paths (the watcher\'s) takes no .legion/ either, nor a name with glob characters as a pattern', () =>
  withTempDir(async (root) => {
    await put(root, '.gitignore', '!.legion/\n!**/.legion/**\n');
    await put(root, 'pkg/index.js', '1\n');
    await put(root, 'a[b].txt', 'literal\n');
    await put(root, 'ab.txt', 'not listed\n');
    const paths = checkpointPaths(root);
    await mkdir(paths.dir, { recursive: true });
    await ensureShadowRepo(paths);
    const first = await takeSnapshot(paths, { maxFileBytes: 1_000_000 });
    await put(root, 'pkg/.legion/web-token', 'SECRET\n');
    await put(root, 'a[b].txt', 'LITERAL\n');
    await put(root, 'ab.txt', 'changed, not listed\n');
    const shot = await takeSnapshot(paths, { maxFileBytes: 1_000_000, previousTree: first.tree, only: new Set(['pkg/.legion/web-token', 'a[b].txt']) });
    assert.equal(shot.scope, 'changed');
    assert.deepEqual(shot.changes.map((c) => c.path), ['a[b].txt']);
  }));
