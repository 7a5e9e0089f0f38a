import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { link, lstat, mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { applyUndo, pickCheckpoint, planUndoTo } from '../../../src/checkpoints/undo';
import type { CheckpointStore } from '../../../src/checkpoints/store';
import { gitText } from '../../../src/checkpoints/git';
import { openStore, put, subject } from './helpers';

/**
 * `legion undo` runs outside the sandbox and writes and removes workspace files. The attacker
 * controls what an agent runs: it can turn workspace folders into links to anywhere (a folder
 * it cannot write, `~/.ssh`, a `.legion/`), files into hard links, FIFOs, at any moment, also
 * while the undo runs (another agent's shell command). No restore may write or remove anything
 * outside the workspace's own folders, and none may be stopped by a special file.
 */

async function planLatest(store: CheckpointStore) {
  const target = pickCheckpoint(await store.list(), {});
  assert.ok(typeof target !== 'string', String(target));
  return planUndoTo(store, target);
}

/** The store, with `beforeApply` run between the restore's last check and its writes (a racing agent). */
function racing(store: CheckpointStore, beforeApply: () => Promise<void>): CheckpointStore {
  return { ...store, restoreLocked: (s, expected, apply) => store.restoreLocked(s, expected, async () => { await beforeApply(); await apply(); }) };
}

test('a folder swapped for a link to outside right before the restore removes nothing through it', () =>
  withTempDir(async (base) => {
    const root = join(base, 'ws');
    const outside = join(base, 'home', '.ssh');
    await put(outside, 'authorized_keys', 'ssh-ed25519 AAAA user\n');
    await put(root, 'dir/keep.txt', 'kept\n');
    const store = await openStore(root);
    const open = await store.begin(subject());
    await put(root, 'dir/authorized_keys', 'made by the batch\n'); // the undo removes it
    await put(root, 'dir/sub/authorized_keys', 'made by the batch\n');
    await open.finish();
    const plan = await planLatest(store);
    assert.deepEqual(plan.restore.map((f) => `${f.action} ${f.path}`).sort(), ['delete dir/authorized_keys', 'delete dir/sub/authorized_keys']);
    await mkdir(join(outside, 'sub'));
    await writeFile(join(outside, 'sub', 'authorized_keys'), 'deep\n');
    const outcome = await applyUndo(racing(store, async () => {
      await rename(join(root, 'dir'), join(root, 'moved'));
      await symlink(outside, join(root, 'dir'));
    }), plan, { runId: 'run-1', includeConflicts: false });
    assert.equal(await readFile(join(outside, 'authorized_keys'), 'utf8'), 'ssh-ed25519 AAAA user\n', 'nothing removed through the link');
    assert.equal(await readFile(join(outside, 'sub', 'authorized_keys'), 'utf8'), 'deep\n', 'nor deeper');
    assert.ok((await lstat(join(outside, 'sub'))).isDirectory(), 'no folder removed through the link');
    assert.ok(outcome.ok || /restore/.test(outcome.error), JSON.stringify(outcome));
    store.close();
  }));

test('a folder swapped for a link to outside before the restore gets no file written through it', () =>
  withTempDir(async (base) => {
    const root = join(base, 'ws');
    const outside = join(base, 'home', '.config', 'legion');
    await put(outside, 'config.yaml', 'mine: true\n');
    await put(root, 'dir/config.yaml', 'workspace file\n');
    const store = await openStore(root);
    const open = await store.begin(subject());
    await rm(join(root, 'dir'), { recursive: true });
    await open.finish();
    const plan = await planLatest(store);
    await applyUndo(racing(store, async () => { await symlink(outside, join(root, 'dir')); }), plan, { runId: 'run-1', includeConflicts: true });
    assert.equal(await readFile(join(outside, 'config.yaml'), 'utf8'), 'mine: true\n', 'nothing written through the link');
    store.close();
  }));

test('a file made a hard link to an outside file is replaced by the restore, the outside file is not written', () =>
  withTempDir(async (base) => {
    const root = join(base, 'ws');
    await put(base, 'outside/rules.yaml', 'version: 1\nrules: []\n');
    await put(root, 'notes.txt', 'before\n');
    const store = await openStore(root);
    const open = await store.begin(subject());
    await rm(join(root, 'notes.txt'));
    await link(join(base, 'outside', 'rules.yaml'), join(root, 'notes.txt'));
    await open.finish();
    const outcome = await applyUndo(store, await planLatest(store), { runId: 'run-1', includeConflicts: false });
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.equal(await readFile(join(root, 'notes.txt'), 'utf8'), 'before\n');
    assert.equal(await readFile(join(base, 'outside', 'rules.yaml'), 'utf8'), 'version: 1\nrules: []\n', 'the outside file is untouched');
    store.close();
  }));

test('a file replaced by a FIFO does not stop checkpoints or the undo (git refuses to add it), and the undo brings the file back', () =>
  withTempDir(async (root) => {
    await put(root, 'README.md', '# project\n');
    await put(root, 'src/main.ts', 'export {};\n');
    const store = await openStore(root);
    const open = await store.begin(subject());
    await rm(join(root, 'README.md'));
    execFileSync('mkfifo', [join(root, 'README.md')]);
    await rm(join(root, 'src'), { recursive: true });
    await open.finish();
    const second = await store.begin(subject('session-user__scribe__default', 'scribe', 2));
    await second.finish();
    const target = pickCheckpoint(await store.list(), { id: open.id });
    assert.ok(typeof target !== 'string', String(target));
    const plan = await planUndoTo(store, target);
    const outcome = await applyUndo(store, plan, { runId: 'run-1', includeConflicts: true });
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.equal(await readFile(join(root, 'src', 'main.ts'), 'utf8'), 'export {};\n');
    assert.ok((await lstat(join(root, 'README.md'))).isFile(), 'the FIFO is replaced by the file');
    assert.equal(await readFile(join(root, 'README.md'), 'utf8'), '# project\n');
    store.close();
  }));

test('a .gitignore that re-includes .legion/ (an agent can write one) brings no .legion/ into a checkpoint, and an undo writes none back', () =>
  withTempDir(async (root) => {
    await put(root, '.legion/rules.yaml', 'version: 1\nrules:\n  - { id: all, decision: allow }\n');
    await put(root, '.legion/web-token', 'SECRET\n');
    await put(root, 'pkg/.legion/rules.yaml', 'version: 1\nrules:\n  - { id: all, decision: allow }\n');
    await put(root, 'src/a.ts', 'export const a = 1;\n');
    await put(root, '.gitignore', '!.legion/\n!/.legion/\n!.legion/**\n!pkg/.legion/\n');
    const store = await openStore(root);
    const open = await store.begin(subject());
    const listed = (await gitText(store.paths.place, ['ls-tree', '-r', '--name-only', open.tree])).trim().split('\n');
    assert.deepEqual(listed, ['.gitignore', 'src/a.ts'], 'no .legion/ file in the snapshot');
    // The user tightens the rules (and trusts the nested workspace) after the checkpoint.
    await writeFile(join(root, '.legion', 'rules.yaml'), 'version: 1\nrules: []\n');
    await writeFile(join(root, 'pkg', '.legion', 'rules.yaml'), 'version: 1\nrules: []\n');
    await put(root, '.legion/allowances.json', '{}\n');
    await writeFile(join(root, 'src', 'a.ts'), 'export const a = 2;\n');
    await open.finish();
    const outcome = await applyUndo(store, await planLatest(store), { runId: 'run-1', includeConflicts: true });
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.equal(await readFile(join(root, 'src', 'a.ts'), 'utf8'), 'export const a = 1;\n', 'the undo ran');
    assert.equal(await readFile(join(root, '.legion', 'rules.yaml'), 'utf8'), 'version: 1\nrules: []\n', 'the tightened rules stay');
    assert.equal(await readFile(join(root, 'pkg', '.legion', 'rules.yaml'), 'utf8'), 'version: 1\nrules: []\n');
    assert.equal(await readFile(join(root, '.legion', 'allowances.json'), 'utf8'), '{}\n', 'nothing under .legion/ removed');
    store.close();
  }));

for (const watch of [false, true]) test(`a huge sparse file (truncate -s 64G) is left out before git reads it: checkpoints and the undo do not wait for git to hash it (${watch ? 'the change watcher\'s path list' : 'a full scan'})`, { timeout: 60_000 }, () =>
  withTempDir(async (tmp) => {
    const root = join(tmp, 'ws');
    await put(root, 'src/a.ts', 'export const a = 1;\n');
    await put(root, 'deep/keep.txt', 'keep\n');
    const store = await openStore(root, { watch });
    if (watch) await store.begin(subject()).then((o) => o.finish()); // arms the watcher: the next snapshots get its list
    const open = await store.begin(subject());
    await writeFile(join(root, 'src', 'a.ts'), 'export const a = 2;\n');
    execFileSync('truncate', ['-s', '64G', join(root, 'huge.bin')]);
    execFileSync('truncate', ['-s', '64G', join(root, 'src', 'also-huge.bin')]);
    await mkdir(join(base(root), 'moved-in'), { recursive: true });
    execFileSync('truncate', ['-s', '64G', join(base(root), 'moved-in', 'inside.bin')]);
    await rename(join(base(root), 'moved-in'), join(root, 'deep', 'moved-in')); // a folder moved in: one event, its files unlisted
    const started = Date.now();
    const files = await open.finish();
    assert.deepEqual(files.map((f) => `${f.status} ${f.path}`), ['M src/a.ts'], 'the huge files are not in the checkpoint');
    const outcome = await applyUndo(store, await planLatest(store), { runId: 'run-1', includeConflicts: false });
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.ok(Date.now() - started < 20_000, `took ${Date.now() - started} ms: git read the sparse files`);
    assert.equal(await readFile(join(root, 'src', 'a.ts'), 'utf8'), 'export const a = 1;\n');
    store.close();
  }));

/** A folder beside the workspace `<tmp>/ws`, for files moved in whole. */
const base = (root: string): string => join(root, '..', 'outside');
