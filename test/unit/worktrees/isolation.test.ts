import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { makeRepo, userGit, userRepoState, worktreesOf, write } from './helpers';

const A = 'session-ur-agent__alice__default';
const B = 'session-ur-agent__bob__default';

test('an isolated session starts from the workspace as it is: uncommitted and untracked changes, not ignored files; the user repo is untouched', async () => {
  await withTempDir(async (root) => {
    await makeRepo(root);
    await write(root, 'shared.txt', 'one\ntwo (edited, not committed)\nthree\n');
    await write(root, 'notes/new.txt', 'untracked\n');
    await write(root, 'build/out.js', 'ignored\n');
    userGit(root, ['add', 'notes/new.txt']); // something staged: the index must stay as it is
    const before = userRepoState(root);
    const worktrees = worktreesOf(root);
    const isolated = await worktrees.isolate(A, 'alice');
    assert.ok(isolated.ok, isolated.ok ? '' : isolated.error);
    const wt = isolated.record.root;
    assert.equal(wt, join(root, '.legion', 'worktrees', A));
    assert.equal(worktrees.rootOf(A), wt);
    assert.equal(await readFile(join(wt, 'shared.txt'), 'utf8'), 'one\ntwo (edited, not committed)\nthree\n');
    assert.equal(await readFile(join(wt, 'notes/new.txt'), 'utf8'), 'untracked\n');
    await assert.rejects(stat(join(wt, 'build/out.js')));
    await assert.rejects(stat(join(wt, '.legion')));
    assert.deepEqual(userRepoState(root), before);
    assert.match(userGit(root, ['branch', '--list', 'legion/*']), new RegExp(`legion/${A}`));
    assert.equal(isolated.record.state, 'working');
  });
});

test('a workspace that is not a git repository refuses isolation with a clear reason', async () => {
  await withTempDir(async (root) => {
    await writeFile(join(root, 'a.txt'), 'x');
    const result = await worktreesOf(root).isolate(A, 'alice');
    assert.equal(result.ok, false);
    assert.match(result.ok ? '' : result.error, /isolation needs a git repository: the workspace is not a git repository/);
  });
});

test('two agents write the same file differently and one file each: untouched until merged, the first merges, the second conflicts, then rebases and merges', async () => {
  await withTempDir(async (root) => {
    await makeRepo(root);
    const before = userRepoState(root);
    const worktrees = worktreesOf(root);
    const a = await worktrees.isolate(A, 'alice');
    const b = await worktrees.isolate(B, 'bob');
    assert.ok(a.ok && b.ok);
    await write(a.record.root, 'shared.txt', 'one\ntwo by alice\nthree\n');
    await write(a.record.root, 'alice.txt', 'alice was here\n');
    await write(b.record.root, 'shared.txt', 'one\ntwo by bob\nthree\n');
    await write(b.record.root, 'bob.txt', 'bob was here\n');

    const workA = await worktrees.collect(A);
    const workB = await worktrees.collect(B);
    assert.ok(workA && workB);
    assert.deepEqual(workA.files.map((f) => `${f.status} ${f.path}`).sort(), ['added alice.txt', 'modified shared.txt']);
    assert.equal(workA.diffstat, '2 files changed, 2 insertions(+), 1 deletion(-)');
    assert.match(workA.diff, /\+two by alice/);
    // Nothing reached the workspace yet.
    assert.equal(await readFile(join(root, 'shared.txt'), 'utf8'), 'one\ntwo\nthree\n');
    await assert.rejects(stat(join(root, 'alice.txt')));

    const checkA = await worktrees.check(A, workA);
    assert.equal(checkA.kind, 'clean');
    const checkB0 = await worktrees.check(B, workB);
    assert.equal(checkB0.kind, 'clean', 'before the first merge the second is clean too');
    assert.ok(checkA.kind === 'clean');
    assert.deepEqual(await worktrees.apply(A, checkA), { ok: true });
    assert.equal(await readFile(join(root, 'shared.txt'), 'utf8'), 'one\ntwo by alice\nthree\n');
    assert.equal(await readFile(join(root, 'alice.txt'), 'utf8'), 'alice was here\n');

    const checkB = await worktrees.check(B, workB);
    assert.equal(checkB.kind, 'conflict');
    assert.ok(checkB.kind === 'conflict');
    assert.deepEqual(checkB.files, ['shared.txt']);
    assert.match(checkB.hunks, /<<<<<<< .*\n.*two by alice[\s\S]*=======\n.*two by bob/);
    await worktrees.conflict(B, checkB);
    await assert.rejects(stat(join(root, 'bob.txt')), 'a conflict applies nothing');

    // Nothing committed on the user's branch; the changes are uncommitted; branches hold each agent's work.
    assert.equal(userRepoState(root).head, before.head);
    assert.equal(userRepoState(root).branches, before.branches);
    assert.equal(userRepoState(root).indexTree, before.indexTree);
    assert.match(userGit(root, ['status', '--porcelain']), / M shared\.txt\n\?\? alice\.txt/);
    assert.equal(userGit(root, ['show', `legion/${A}:shared.txt`]), 'one\ntwo by alice\nthree\n');
    assert.equal(userGit(root, ['show', `legion/${B}:bob.txt`]), 'bob was here\n');

    // Rebase: the next isolation of B checks out the merge with its markers; bob resolves; it merges.
    const rebased = await worktrees.isolate(B, 'bob');
    assert.ok(rebased.ok);
    assert.equal(rebased.how, 'rebased');
    const marked = await readFile(join(rebased.record.root, 'shared.txt'), 'utf8');
    assert.match(marked, /<<<<<<<[\s\S]*two by alice[\s\S]*two by bob[\s\S]*>>>>>>>/);
    await write(rebased.record.root, 'shared.txt', 'one\ntwo by alice and bob\nthree\n');
    const again = await worktrees.collect(B);
    assert.ok(again);
    assert.deepEqual(again.files.map((f) => f.path).sort(), ['bob.txt', 'shared.txt'], 'measured against the workspace it was rebased on');
    assert.doesNotMatch(again.diff, /alice\.txt/, "alice's merged work is part of the new base");
    const checkAgain = await worktrees.check(B, again);
    assert.equal(checkAgain.kind, 'clean');
    assert.ok(checkAgain.kind === 'clean');
    assert.deepEqual(await worktrees.apply(B, checkAgain), { ok: true });
    assert.equal(await readFile(join(root, 'shared.txt'), 'utf8'), 'one\ntwo by alice and bob\nthree\n');
    assert.equal(await readFile(join(root, 'bob.txt'), 'utf8'), 'bob was here\n');
    assert.equal(await readFile(join(root, 'alice.txt'), 'utf8'), 'alice was here\n');
    assert.equal(userRepoState(root).head, before.head);
  });
});

test('a merge applies onto what the workspace holds now (three-way), deletions included; prune removes finished worktrees and their branches', async () => {
  await withTempDir(async (root) => {
    await makeRepo(root, { 'a.txt': '1\n2\n3\n4\n5\n6\n7\n8\n', 'gone.txt': 'bye\n' });
    const worktrees = worktreesOf(root);
    const a = await worktrees.isolate(A, 'alice');
    assert.ok(a.ok);
    await write(a.record.root, 'a.txt', '1 alice\n2\n3\n4\n5\n6\n7\n8\n');
    const { unlink } = await import('node:fs/promises');
    await unlink(join(a.record.root, 'gone.txt'));
    // The user edits the other end of the file meanwhile.
    await write(root, 'a.txt', '1\n2\n3\n4\n5\n6\n7\n8 user\n');
    const work = await worktrees.collect(A);
    assert.ok(work);
    const check = await worktrees.check(A, work);
    assert.ok(check.kind === 'clean');
    await worktrees.apply(A, check);
    assert.equal(await readFile(join(root, 'a.txt'), 'utf8'), '1 alice\n2\n3\n4\n5\n6\n7\n8 user\n');
    await assert.rejects(stat(join(root, 'gone.txt')));
    assert.deepEqual((await worktrees.list()).map((r) => `${r.sessionId} ${r.state}`), [`${A} merged`]);
    assert.deepEqual(await worktrees.prune(), [A]);
    assert.deepEqual(await worktrees.list(), []);
    await assert.rejects(stat(a.record.path));
    assert.equal(userGit(root, ['branch', '--list', 'legion/*']).trim(), '');
  });
});

test('hostile work: a symlink planted in the workspace after delegation does not carry a merge outside it; .legion/ and .git paths never merge', async () => {
  await withTempDir(async (base) => {
    const { mkdir, symlink, readdir } = await import('node:fs/promises');
    const root = join(base, 'ws');
    const outside = join(base, 'outside');
    await mkdir(root);
    await mkdir(outside);
    await makeRepo(root);
    const worktrees = worktreesOf(root);
    const a = await worktrees.isolate(A, 'alice');
    assert.ok(a.ok);
    await write(a.record.root, 'a/b.txt', 'through the link?\n');
    await write(a.record.root, '.legion/evil.json', '{}');
    const work = await worktrees.collect(A);
    assert.ok(work);
    assert.deepEqual(work.files.map((f) => f.path), ['a/b.txt'], '.legion/ of the worktree is never part of the work');
    await symlink(outside, join(root, 'a'));
    const merged = await worktrees.merge(A, work);
    assert.notEqual(merged.kind, 'merged');
    assert.deepEqual(await readdir(outside), [], 'nothing was written outside the workspace');
  });
});

test('applying a merge refuses a path behind a symbolic link in the workspace before writing anything', async () => {
  await withTempDir(async (base) => {
    const { mkdir, symlink, readdir } = await import('node:fs/promises');
    const { execFileSync } = await import('node:child_process');
    const { applyMerge } = await import('../../../src/worktrees/apply');
    const root = join(base, 'ws');
    const outside = join(base, 'outside');
    await mkdir(root);
    await mkdir(outside);
    await makeRepo(root);
    await symlink(outside, join(root, 'a'));
    const oid = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: root, input: 'payload\n', encoding: 'utf8' }).trim();
    const journal = join(root, '.legion', 'worktrees', `${A}.merge.json`);
    await assert.rejects(
      applyMerge({ gitDir: join(root, '.git'), workTree: root }, root, journal, { version: 1, sessionId: A, merged: oid, ops: [{ path: 'a/b.txt', kind: 'write', mode: '100644', oid }] }),
      /refused: a\/b\.txt lies behind the symbolic link a/,
    );
    assert.deepEqual(await readdir(outside), []);
    const { existsSync } = await import('node:fs');
    assert.equal(existsSync(journal), false, 'refused before anything was journaled or written');
  });
});
