import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { withTempDir } from '../../../helpers/tmp';
import { workspaceHooksPaths } from '../../../../src/tools/sandbox/git-guard';

/**
 * git reads a variable written on its section header's line (`[core] hooksPath = .githooks`,
 * `[include] path = shared.gitconfig`). The guard's reading of the config skipped every header
 * line whole, so such a hooksPath folder or included file was not guarded: a sandboxed command
 * could rewrite the hook (or plant a `core.fsmonitor` in the include) that the user's next git runs.
 */
test('git guard: a hooksPath or include written on its header\'s line is read as git reads it', async () => {
  await withTempDir(async (dir) => {
    const ws = join(realpathSync(dir), 'ws');
    mkdirSync(ws);
    execFileSync('git', ['init', '-q'], { cwd: ws });
    appendFileSync(join(ws, '.git', 'config'), '[core] hooksPath = .githooks\n[include] path = ../shared.gitconfig ; a comment\n');
    // The control: git itself reads them.
    const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
    assert.equal(execFileSync('git', ['config', '--get', 'core.hooksPath'], { cwd: ws, env, encoding: 'utf8' }).trim(), '.githooks');
    assert.equal(execFileSync('git', ['config', '--get', 'include.path'], { cwd: ws, env, encoding: 'utf8' }).trim(), '../shared.gitconfig');
    const guarded = workspaceHooksPaths(ws, { HOME: join(dir, 'home'), GIT_CONFIG_GLOBAL: join(dir, 'none') });
    assert.ok(guarded.includes(join(ws, '.githooks')), JSON.stringify(guarded));
    assert.ok(guarded.includes(join(ws, 'shared.gitconfig')), JSON.stringify(guarded));
  });
});
