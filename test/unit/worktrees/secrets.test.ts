import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { stat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { shippedRules } from '../../helpers/rules';
import { createAuthorizer, workspaceRealPath } from '../../../src/authz/authorizer';
import type { Participant } from '../../../src/collective/participant';
import { makeRepo, userGit, worktreesOf, write } from './helpers';

/**
 * Isolation commits the workspace as it is into the user's repository (docs/worktrees.md), where
 * the shipped read-only `git log -p --all` prints every commit to any agent without asking. A
 * file `file_read` may not read that the user never committed (an untracked key, not ignored)
 * must not get there: workspace snapshots leave out the rules' secret paths.
 */
const A = 'session-ur-agent__alice__default';
const SECRET = 'SECRET-PEM-BYTES-5c1e';
const USER: Participant = { id: 'user', kind: 'user', name: 'You', description: '', status: 'active', approvalAuthority: '*' };

test('an untracked secret file is left out of the snapshots isolation commits: not in the worktree, not printed by the allowed git log -p --all', async () => {
  await withTempDir(async (root) => {
    await makeRepo(root);
    await write(root, 'deploy/server.pem', `-----BEGIN PRIVATE KEY-----\n${SECRET}\n`);
    await write(root, 'deploy/.ENV', `TOKEN=${SECRET}\n`);
    await write(root, 'notes/new.txt', 'untracked, not secret\n');
    const worktrees = worktreesOf(root);
    const isolated = await worktrees.isolate(A, 'alice');
    assert.ok(isolated.ok, isolated.ok ? '' : isolated.error);
    const wt = isolated.record.root;
    assert.equal(await readFile(join(wt, 'notes/new.txt'), 'utf8'), 'untracked, not secret\n');
    await assert.rejects(stat(join(wt, 'deploy/server.pem')));
    await assert.rejects(stat(join(wt, 'deploy/.ENV')));
    // The agent works and the merge is checked: the workspace is snapshotted again.
    await write(wt, 'notes/new.txt', 'changed by alice\n');
    const work = await worktrees.collect(A);
    assert.ok(work);
    const check = await worktrees.check(A, work);
    assert.equal(check.kind, 'clean');
    await worktrees.apply(A, check as Extract<typeof check, { kind: 'clean' }>);
    assert.equal(await readFile(join(root, 'deploy/server.pem'), 'utf8'), `-----BEGIN PRIVATE KEY-----\n${SECRET}\n`, 'the merge leaves the workspace\'s own secret alone');

    const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), workspaceRoot: root, getParticipant: () => USER, realPath: workspaceRealPath(root) });
    const decision = await authorize({ toolName: 'shell', input: { command: 'git log -p --all' }, participantId: 'user', sessionId: 's', chain: ['user'] });
    assert.equal(decision.decision, 'allow', 'the read-only rule allows it: what it prints must hold no secret');
    const printed = execFileSync('bash', ['-c', 'git log -p --all'], { cwd: root, encoding: 'utf8' });
    assert.match(printed, /changed by alice/);
    assert.doesNotMatch(printed, new RegExp(SECRET));
    // Every object the snapshots wrote, reachable or not.
    const objects = userGit(root, ['cat-file', '--batch-all-objects', '--batch']);
    assert.doesNotMatch(objects, new RegExp(SECRET));
  });
});

test('a workspace in a folder of the repository: an untracked secret elsewhere in the repository is left out too', async () => {
  await withTempDir(async (repo) => {
    await makeRepo(repo, { 'app/README.md': '# app\n', 'README.md': '# repo\n' });
    await write(repo, '.env', `TOKEN=${SECRET}\n`);
    await write(repo, 'ops/deploy.pem', `-----BEGIN PRIVATE KEY-----\n${SECRET}\n`);
    await write(repo, 'app/notes.txt', 'untracked, not secret\n');
    const root = join(repo, 'app');
    const worktrees = worktreesOf(root);
    const isolated = await worktrees.isolate(A, 'alice');
    assert.ok(isolated.ok, isolated.ok ? '' : isolated.error);
    assert.equal(await readFile(join(isolated.record.root, 'notes.txt'), 'utf8'), 'untracked, not secret\n');
    const objects = userGit(repo, ['cat-file', '--batch-all-objects', '--batch']);
    assert.doesNotMatch(objects, new RegExp(SECRET));
  });
});
