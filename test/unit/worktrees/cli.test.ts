import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { makeRepo, userGit, worktreesOf, write } from './helpers';

const DONE = 'session-ur-agent__alice__default';
const BUSY = 'session-ur-agent__bob__default';

test('legion worktrees lists isolated sessions with their state; --prune removes only the finished ones and their branches', async () => {
  await withTempDir(async (root) => {
    await makeRepo(root);
    const worktrees = worktreesOf(root);
    const done = await worktrees.isolate(DONE, 'alice');
    const busy = await worktrees.isolate(BUSY, 'bob');
    assert.ok(done.ok && busy.ok);
    await write(done.record.root, 'alice.txt', 'a\n');
    const work = await worktrees.collect(DONE);
    assert.ok(work);
    assert.equal((await worktrees.merge(DONE, work)).kind, 'merged');

    const listed = await runCli(['worktrees'], { cwd: root, env: { HOME: root } });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /SESSION\s+AGENT\s+STATE/);
    assert.match(listed.stdout, new RegExp(`${DONE}\\s+alice\\s+merged`));
    assert.match(listed.stdout, new RegExp(`${BUSY}\\s+bob\\s+working\\s+.*legion/${BUSY}`));

    const pruned = await runCli(['worktrees', '--prune'], { cwd: root, env: { HOME: root } });
    assert.equal(pruned.code, 0, pruned.stderr);
    assert.match(pruned.stdout, new RegExp(`pruned ${DONE}`));
    assert.doesNotMatch(pruned.stdout, new RegExp(`${DONE}\\s+alice`));
    assert.equal(existsSync(done.record.path), false);
    assert.equal(existsSync(join(busy.record.path, '.git')), true, 'a working session keeps its worktree');
    assert.equal(userGit(root, ['for-each-ref', '--format=%(refname:short)', 'refs/heads/legion/']).trim(), `legion/${BUSY}`);

    const json = await runCli(['worktrees', '--json'], { cwd: root, env: { HOME: root } });
    assert.deepEqual((JSON.parse(json.stdout) as { worktrees: { sessionId: string; state: string }[] }).worktrees.map((w) => [w.sessionId, w.state]), [[BUSY, 'working']]);
  });
});

test('legion worktrees in a workspace without isolated sessions says so (git or not)', async () => {
  await withTempDir(async (root) => {
    const listed = await runCli(['worktrees', '--prune'], { cwd: root, env: { HOME: root } });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /no isolated sessions/);
  });
});
