import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, rm, symlink, writeFile, readFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { applyUndo, pickCheckpoint, planUndoTo, diffOfPlan, notesFor } from '../../../src/checkpoints/undo';
import { openStore, put, subject, treeState } from './helpers';
import type { CheckpointStore } from '../../../src/checkpoints/store';

async function undoLatest(store: CheckpointStore, includeConflicts = false, id?: string) {
  const target = pickCheckpoint(await store.list(), { id });
  assert.ok(typeof target !== 'string', String(target));
  const plan = await planUndoTo(store, target);
  return { plan, outcome: await applyUndo(store, plan, { runId: 'run-1', includeConflicts }) };
}

test('a batch that creates, edits, deletes and chmods files is undone exactly (bytes and modes), in a folder that is not a git repository', () =>
  withTempDir(async (root) => {
    await put(root, 'keep.txt', 'untouched\n');
    await put(root, 'src/edit.ts', 'export const a = 1;\n');
    await put(root, 'src/gone.bin', '\u0000\u0001binary\u00ff');
    await put(root, 'run.sh', '#!/bin/sh\necho hi\n', 0o755);
    await put(root, 'plain.sh', 'echo\n', 0o644);
    await symlink('keep.txt', join(root, 'link'));
    const before = await treeState(root);
    const store = await openStore(root);
    const open = await store.begin(subject());
    await writeFile(join(root, 'src/edit.ts'), 'export const a = 2;\n');
    await rm(join(root, 'src/gone.bin'));
    await put(root, 'new/deep/created.md', '# new\n');
    await chmod(join(root, 'run.sh'), 0o644);
    await chmod(join(root, 'plain.sh'), 0o755);
    await rm(join(root, 'link'));
    await symlink('src', join(root, 'link'));
    const files = await open.finish();
    assert.deepEqual(files.map((f) => `${f.status} ${f.path}`).sort(), [
      'A new/deep/created.md', 'D src/gone.bin', 'M plain.sh', 'M run.sh', 'M src/edit.ts', 'M link',
    ].sort());
    const { plan, outcome } = await undoLatest(store);
    assert.equal(plan.conflicts.length, 0);
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.deepEqual(await treeState(root), before);
    const diff = await diffOfPlan(store, plan, plan.restore);
    assert.match(diff, /-export const a = 2;\n\+export const a = 1;/);
    store.close();
  }));

test('undo of the undo puts the agent\'s changes back', () =>
  withTempDir(async (root) => {
    await put(root, 'a.txt', 'one\n');
    const store = await openStore(root);
    const open = await store.begin(subject());
    await writeFile(join(root, 'a.txt'), 'two\n');
    await put(root, 'b.txt', 'created\n');
    await open.finish();
    const afterAgent = await treeState(root);
    const first = await undoLatest(store);
    assert.ok(first.outcome.ok);
    assert.equal(await readFile(join(root, 'a.txt'), 'utf8'), 'one\n');
    const checkpoints = await store.list();
    const restore = checkpoints[checkpoints.length - 1]!;
    assert.equal(restore.restoreOf, checkpoints[0]!.id);
    assert.equal(restore.participantId, 'user');
    const second = await undoLatest(store);
    assert.ok(second.outcome.ok, JSON.stringify(second.outcome));
    assert.equal(second.plan.conflicts.length, 0);
    assert.deepEqual(await treeState(root), afterAgent);
    store.close();
  }));

test('a file edited by hand since the checkpoint is a conflict, kept unless confirmed', () =>
  withTempDir(async (root) => {
    await put(root, 'agent.txt', 'v1\n');
    await put(root, 'shared.txt', 'v1\n');
    const store = await openStore(root);
    const open = await store.begin(subject());
    await writeFile(join(root, 'agent.txt'), 'agent\n');
    await writeFile(join(root, 'shared.txt'), 'agent\n');
    await open.finish();
    await writeFile(join(root, 'shared.txt'), 'agent then hand\n');
    await put(root, 'hand-only.txt', 'mine\n');
    const { plan, outcome } = await undoLatest(store);
    assert.deepEqual(plan.restore.map((f) => f.path), ['agent.txt']);
    assert.deepEqual(plan.conflicts.map((f) => f.path).sort(), ['hand-only.txt', 'shared.txt']);
    assert.ok(outcome.ok);
    assert.deepEqual(outcome.kept.slice().sort(), ['hand-only.txt', 'shared.txt']);
    assert.equal(await readFile(join(root, 'agent.txt'), 'utf8'), 'v1\n');
    assert.equal(await readFile(join(root, 'shared.txt'), 'utf8'), 'agent then hand\n');
    assert.equal(await readFile(join(root, 'hand-only.txt'), 'utf8'), 'mine\n');
    // Confirmed: the hand edits go too (undoing the restore itself, then all of it).
    const again = await undoLatest(store, true, (await store.list())[0]!.id);
    assert.ok(again.outcome.ok, JSON.stringify(again.outcome));
    assert.equal(await readFile(join(root, 'shared.txt'), 'utf8'), 'v1\n');
    await assert.rejects(readFile(join(root, 'hand-only.txt')));
    store.close();
  }));

test('a restore refuses when the workspace changed after the plan was made', () =>
  withTempDir(async (root) => {
    await put(root, 'a.txt', 'one\n');
    const store = await openStore(root);
    const open = await store.begin(subject());
    await writeFile(join(root, 'a.txt'), 'two\n');
    await open.finish();
    const target = pickCheckpoint(await store.list(), {});
    assert.ok(typeof target !== 'string');
    const plan = await planUndoTo(store, target);
    await writeFile(join(root, 'a.txt'), 'three\n');
    const outcome = await applyUndo(store, plan, { runId: 'run-1', includeConflicts: false });
    assert.equal(outcome.ok, false);
    assert.equal(await readFile(join(root, 'a.txt'), 'utf8'), 'three\n');
    store.close();
  }));

test('.gitignore rules, .legion/ and files over the size limit are left out; a big file shrinking is kept again', () =>
  withTempDir(async (root) => {
    await put(root, '.gitignore', '*.log\nbuild/\n');
    await put(root, 'app.log', 'log\n');
    await put(root, 'build/out.js', 'x');
    await mkdir(join(root, '.legion'), { recursive: true });
    await put(root, '.legion/notes.txt', 'mine');
    await put(root, 'big.bin', 'x'.repeat(5000));
    await put(root, 'small.txt', 's');
    const store = await openStore(root, { maxFileBytes: 1000 });
    const open = await store.begin(subject());
    const { gitText } = await import('../../../src/checkpoints/git');
    const listed = (await gitText(store.paths.place, ['ls-tree', '-r', '--name-only', open.tree])).trim().split('\n');
    assert.deepEqual(listed.sort(), ['.gitignore', 'small.txt']);
    await writeFile(join(root, 'big.bin'), 'small now');
    const files = await open.finish();
    assert.deepEqual(files.map((f) => `${f.status} ${f.path}`), ['A big.bin']);
    store.close();
  }));

test('notes name each agent session, its files and its first undone turn', () => {
  const by = (sessionId: string, turn: number) => ({ checkpointId: 'c', runId: 'run-1', sessionId, participantId: sessionId.split('__')[1]!, turn });
  const notes = notesFor([
    { path: 'a.txt', action: 'revert', by: [by('session-user__scribe__default', 3), by('session-user__coder__default', 1)] },
    { path: 'b.txt', action: 'delete', by: [by('session-user__scribe__default', 2)] },
  ]);
  assert.equal(notes.length, 2);
  const scribe = notes.find((n) => n.participantId === 'scribe')!;
  assert.match(scribe.text, /the user restored files a\.txt, b\.txt to before your turn 2/);
});
