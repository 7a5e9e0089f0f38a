import '../../../helpers/own-home';
import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createShellTool } from '../../../../src/tools/builtin/shell';
import { executeTool } from '../../../../src/tools/execute-tool';
import type { ShellSandbox } from '../../../../src/tools/sandbox/sandbox';
import type { ToolResult } from '../../../../src/tools/types';
import { makeToolContext } from '../../../helpers/tool-context';
import { makeSandboxFixture, realProbe, realSandbox, type SandboxFixture } from '../../../helpers/sandbox-fixture';

// The git check's entry bound (docs/sandbox.md#git) must not be a way past it: a call that
// floods the guarded surfaces with entries first, then plants a payload the check would
// otherwise record after the bound, must not leave that payload for the host's next git.
const probe = await realProbe();
const skip = probe.kind === 'available' ? false : `no sandbox on this machine: ${probe.reason}`;

let fx: SandboxFixture;
let sandbox: ShellSandbox;
let pwned: string;
beforeEach(async () => {
  fx = await makeSandboxFixture();
  sandbox = realSandbox(fx, probe);
  pwned = join(fx.outside, 'PWNED');
  git(fx.ws, 'add', 'README.md');
  git(fx.ws, 'commit', '-qm', 'init');
});
afterEach(async () => {
  sandbox?.dispose();
  await fx?.cleanup();
});

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
}

function run(command: string): Promise<ToolResult> {
  return executeTool(createShellTool({ killGraceMs: 300, drainMs: 2_000, sandbox }), { command }, makeToolContext(fx.ws));
}

test('sandboxed: flooding .git past the check\'s entry bound does not let a planted submodule config through', { skip, timeout: 120_000 }, async () => {
  const chain = [
    // 4,100 entries in a git directory's nested surface, recorded before the submodule's config
    'mkdir -p .git/worktrees/a/hooks && (cd .git/worktrees/a/hooks && seq 1 4100 | xargs touch)',
    'git init -q plantsrc && cp -r plantsrc/.git planted',
    `printf "[core]\\n\\tfsmonitor = \\"touch ${pwned}; false\\"\\n" >> planted/config`,
    'mkdir s && echo "gitdir: ../planted" > s/.git',
    `printf '[submodule "s"]\\n\\tpath = s\\n' > .gitmodules`,
    'git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),s',
  ].join(' && ');
  // The control: unconfined, the chain plants a payload the host's git runs.
  const copy = join(fx.base, 'control');
  cpSync(fx.ws, copy, { recursive: true });
  execFileSync('bash', ['-c', chain], { cwd: copy, stdio: 'ignore' });
  spawnSync('git', ['status', '--short'], { cwd: copy });
  assert.ok(existsSync(pwned), 'the control: the payload fires unconfined');
  rmSync(pwned, { force: true });
  rmSync(copy, { recursive: true, force: true });

  const result = await run(chain);
  assert.equal(result.isError, true, result.content);
  assert.match(result.content, /blocked by the sandbox/);
  spawnSync('git', ['status', '--short'], { cwd: fx.ws });
  assert.equal(existsSync(pwned), false, `the planted submodule ran its payload on the host; the call said: ${result.content.slice(-600)}`);
});
