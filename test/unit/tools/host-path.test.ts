import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { hostArgs, hostPath } from '../../../src/tools/host-path';
import { gitEnv } from '../../../src/checkpoints/git';
import { withTempDir } from '../../helpers/tmp';

/**
 * The PATH of what Legion runs itself, outside any sandbox (src/tools/host-path.ts): no folder of
 * the workspace, which a sandboxed command may write (a planted `git` or `bwrap` would run as the
 * user). test/e2e/sandbox-path-plant.test.ts is the attack end to end.
 */
test('hostPath drops relative entries and every entry inside the workspace, as written or through a symbolic link', async () => {
  await withTempDir(async (dir) => {
    const ws = join(dir, 'ws');
    const outside = join(dir, 'tools');
    await mkdir(join(ws, '.venv', 'bin'), { recursive: true });
    await mkdir(join(outside, 'bin'), { recursive: true });
    await symlink(ws, join(dir, 'ws-link'));
    await symlink(join(ws, '.venv', 'bin'), join(outside, 'venv-bin'));
    const path = [
      join(ws, '.venv', 'bin'), // an activated virtual environment
      join(ws, 'node_modules', '.bin'), // npx: need not exist yet
      `${ws}/`, // the root itself
      join(dir, 'ws-link', 'bin'), // through a link to the workspace, not there yet
      join(outside, 'venv-bin'), // a link outside into the workspace
      '', '.', 'bin', // the working directory
      '/usr/bin',
      join(outside, 'bin'),
      join(dir, 'ws-other', 'bin'), // a sibling whose name starts like the workspace's
    ].join(':');
    assert.equal(hostPath(path, ws), ['/usr/bin', join(outside, 'bin'), join(dir, 'ws-other', 'bin')].join(':'));
    // A session's worktree lies in the workspace's .legion/: the workspace's folders go all the same.
    assert.equal(hostPath(path, join(ws, '.legion', 'worktrees', 's-1')), ['/usr/bin', join(outside, 'bin'), join(dir, 'ws-other', 'bin')].join(':'));
    assert.equal(hostPath(path, join(dir, 'ws-link')), ['/usr/bin', join(outside, 'bin'), join(dir, 'ws-other', 'bin')].join(':'));
  });
});

test('the checkpoints\' and worktrees\' git runs with that PATH', async () => {
  await withTempDir(async (dir) => {
    const ws = join(dir, 'ws');
    await mkdir(join(ws, '.venv', 'bin'), { recursive: true });
    const saved = process.env.PATH;
    process.env.PATH = `${join(ws, '.venv', 'bin')}:/usr/bin:/bin`;
    try {
      assert.equal(gitEnv({ gitDir: join(ws, '.legion', 'checkpoints', 'git'), workTree: ws }).PATH, '/usr/bin:/bin');
      assert.equal(gitEnv({ gitDir: join(ws, '.git'), workTree: join(ws, '.legion', 'worktrees', 's-2') }).PATH, '/usr/bin:/bin');
    } finally {
      process.env.PATH = saved;
    }
  });
});

/**
 * npm's package runner behind global options: `npm --registry URL exec pkg`, `npm --cache /x exec
 * pkg` took the option's value (`URL`, `/x`) for the command and got no `--prefix`, so npm looked
 * for the package in the workspace's node_modules and read its .npmrc. An option whose value may
 * follow it leaves the command open: the runner is recognised behind it; a command npm surely
 * runs otherwise (`run`, `start`, behind a flag known to take no value) is left as written.
 */
test('hostArgs: npm exec / x / init behind options with values gets --prefix; other npm commands keep their arguments', () => {
  const prefixed = (args: string[]) => hostArgs('/usr/bin/npm', args, '/cfg')[0] === '--prefix=/cfg';
  for (const args of [
    ['exec', 'pkg'], ['x', 'pkg'], ['--registry', 'https://r.example', 'exec', 'pkg'], ['--cache', '/x', 'exec', 'pkg'],
    ['--registry=https://r.example', 'x', 'pkg'], ['-w', 'app', 'exec', 'pkg'], ['--cache', '/x', '--loglevel', 'warn', 'exec', 'pkg'],
    ['--yes', '--cache', '/x', 'x', 'pkg'], ['init', 'react-app'], ['--cache', '/x', 'create', 'thing'],
  ]) assert.ok(prefixed(args), `npm ${args.join(' ')} got no --prefix`);
  for (const args of [['run', 'start'], ['start'], ['--silent', 'run', 'exec'], ['run', 'x'], ['-y', 'run', 'x'], ['--', 'exec'], []]) {
    assert.deepEqual(hostArgs('/usr/bin/npm', args, '/cfg'), args, `npm ${args.join(' ')}`);
  }
  assert.deepEqual(hostArgs('/usr/local/bin/npx', ['-y', 'pkg'], '/cfg'), ['--prefix=/cfg', '-y', 'pkg']);
  assert.deepEqual(hostArgs('/usr/bin/node', ['exec'], '/cfg'), ['exec']);
});

test('hostArgs: npm\'s scripts run by node (npx-cli.js, npm-cli.js exec) get --prefix after the script; other node scripts keep their arguments', () => {
  const npx = '/usr/lib/node_modules/npm/bin/npx-cli.js';
  const npm = '/usr/lib/node_modules/npm/bin/npm-cli.js';
  assert.deepEqual(hostArgs('/usr/bin/node', [npx, '-y', 'pkg'], '/cfg'), [npx, '--prefix=/cfg', '-y', 'pkg']);
  assert.deepEqual(hostArgs('node', ['--max-old-space-size=512', '-r', 'x.js', npx, 'pkg'], '/cfg'), ['--max-old-space-size=512', '-r', 'x.js', npx, '--prefix=/cfg', 'pkg']);
  assert.deepEqual(hostArgs('/usr/bin/nodejs', ['--', npm, 'exec', 'pkg'], '/cfg'), ['--', npm, '--prefix=/cfg', 'exec', 'pkg']);
  assert.deepEqual(hostArgs('/usr/bin/node', [npm, 'run', 'start'], '/cfg'), [npm, 'run', 'start']);
  for (const args of [['server.js', 'npx-cli.js'], ['-e', 'x', npx], ['-r', npx, 'server.js'], []]) {
    assert.deepEqual(hostArgs('/usr/bin/node', args, '/cfg'), args, `node ${args.join(' ')}`);
  }
});
