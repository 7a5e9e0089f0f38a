import '../../../helpers/own-home';
import { secretPathMatcher } from '../../../../src/tools/sandbox/secrets';
import { DEFAULT_SECRET_PATTERNS } from '../../../../src/tools/sandbox/secret-patterns';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createShellTool } from '../../../../src/tools/builtin/shell';
import { createBuiltinTools } from '../../../../src/tools/registry';
import { executeTool } from '../../../../src/tools/execute-tool';
import type { ShellSandbox } from '../../../../src/tools/sandbox/sandbox';
import type { Tool, ToolResult } from '../../../../src/tools/types';
import { createFileTodoStore } from '../../../../src/tools/todo-store';
import { makeToolContext } from '../../../helpers/tool-context';
import { makeSandboxFixture, realProbe, realSandbox, type SandboxFixture } from '../../../helpers/sandbox-fixture';

// Escape corpus, environment (docs/sandbox.md#environment): secrets in Legion's own environment
// must not reach a command, sandboxed or not, nor be readable from the sandbox's pid 1.
const probe = await realProbe();
const skip = probe.kind === 'available' ? false : `no sandbox on this machine: ${probe.reason}`;

const SECRETS: Record<string, string> = {
  LEGION_TELEGRAM_TOKEN: '123456:telegram-secret-value',
  GITHUB_TOKEN: 'ghp_githubsecretvalue',
  AWS_SECRET_ACCESS_KEY: 'aws-secret-value',
  ANTHROPIC_API_KEY: 'sk-ant-secret-value',
};
const SECRET_VALUES = /telegram-secret-value|ghp_githubsecretvalue|aws-secret-value|sk-ant-secret-value/;

let fx: SandboxFixture;
let sandbox: ShellSandbox;
const saved: Record<string, string | undefined> = {};
before(async () => {
  fx = await makeSandboxFixture();
  sandbox = realSandbox(fx, probe);
  // The attack as found: the tokens sit in Legion's own process environment.
  for (const [name, value] of Object.entries({ ...SECRETS, MY_TOOL_MODE: 'fast', MY_TOOL_LEVEL: '3', LC_ALL: 'C.UTF-8' })) {
    saved[name] = process.env[name];
    process.env[name] = value;
  }
});
after(async () => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  sandbox?.dispose();
  await fx?.cleanup();
});

function run(shell: Tool, command: string): Promise<ToolResult> {
  return executeTool(shell, { command }, makeToolContext(fx.ws));
}

const DUMP = 'env; echo ---pid1---; cat /proc/1/environ | tr "\\0" "\\n"';

test('sandboxed: the environment is an allow-list; /proc/1/environ holds no secret', { skip }, async () => {
  const result = await run(createShellTool({ sandbox, passEnv: ['MY_TOOL_*'] }), DUMP);
  assert.equal(result.isError, undefined, result.content);
  assert.doesNotMatch(result.content, SECRET_VALUES);
  for (const name of Object.keys(SECRETS)) assert.doesNotMatch(result.content, new RegExp(`^${name}=`, 'm'), name);
  const [own, pid1] = result.content.split('---pid1---');
  assert.match(own!, /^PATH=/m);
  assert.match(own!, /^HOME=/m);
  assert.match(own!, /^LC_ALL=C\.UTF-8$/m);
  assert.match(own!, /^TMPDIR=\/tmp$/m);
  assert.match(own!, /^MY_TOOL_MODE=fast$/m, 'sandbox.env passes names through (a prefix here)');
  assert.match(own!, /^MY_TOOL_LEVEL=3$/m);
  assert.match(pid1!, /^PATH=/m, 'pid 1 of the sandbox was read');
  const names = own!.split('\n').map((line) => line.split('=')[0]).filter((n) => n && /^[A-Z_]+$/.test(n));
  const allowed = /^(PATH|HOME|USER|LANG|LC_.*|TERM|TZ|TMPDIR|PAGER|GIT_PAGER|GIT_TERMINAL_PROMPT|MY_TOOL_.*|PWD|SHLVL|_|OLDPWD)$/;
  assert.deepEqual(names.filter((n) => !allowed.test(n!)), [], 'nothing beyond the allow-list (and what bash sets itself)');
});

test('unsandboxed: the same allow-list; a listed provider key still does not pass', async () => {
  const result = await run(createShellTool({ passEnv: ['GITHUB_TOKEN', 'ANTHROPIC_API_KEY'], sandbox: 'none' }), 'env');
  assert.equal(result.isError, undefined, result.content);
  assert.doesNotMatch(result.content, /telegram-secret-value|aws-secret-value|sk-ant-secret-value/);
  assert.match(result.content, /^GITHUB_TOKEN=ghp_githubsecretvalue$/m, 'a name the user lists in sandbox.env passes');
  assert.match(result.content, /^PATH=/m);
  const plain = await run(createShellTool({ sandbox: 'none' }), 'env');
  assert.doesNotMatch(plain.content, SECRET_VALUES);
  assert.doesNotMatch(plain.content, /^MY_TOOL_MODE=/m);
});

test('the composed tools pass sandbox.env to shell', async () => {
  const tools = createBuiltinTools({ secretPath: secretPathMatcher(DEFAULT_SECRET_PATTERNS),  todoStore: createFileTodoStore(fx.ws), shellEnv: ['MY_TOOL_MODE'], sandbox: 'none' });
  const shell = tools.find((t) => t.name === 'shell')!;
  const result = await run(shell, 'echo "mode=$MY_TOOL_MODE level=$MY_TOOL_LEVEL token=$GITHUB_TOKEN"');
  assert.match(result.content, /mode=fast level= token=$/m);
});

test('PATH entries that name the working directory (empty, `.`, relative) are dropped: a `git` planted in the workspace does not run for `git status`', async () => {
  // A cloned repository can hold an executable named `git` (or `cat`, `ls`…) at its root; with
  // an empty PATH entry (`/usr/bin:`, a common slip) or `.`, bash finds it first, so the
  // auto-allowed `git status` would run it, with no approval.
  const marker = join(fx.base, 'PLANTED-RAN');
  writeFileSync(join(fx.ws, 'git'), `#!/bin/sh\ntouch ${marker}\necho planted\n`, { mode: 0o755 });
  try {
    for (const path of [`:${process.env.PATH}`, `.:${process.env.PATH}`, `${process.env.PATH}:`, `bin:./x:${process.env.PATH}`.replace('bin', '.')]) {
      const control = spawnSync('/bin/bash', ['-c', 'git status'], { cwd: fx.ws, env: { PATH: path }, encoding: 'utf8' });
      if (!path.endsWith(':')) assert.match(control.stdout, /planted/, `the control: bash runs the planted git with PATH=${path}`);
      rmSync(marker, { force: true });
      const shells = [createShellTool({ env: { PATH: path, HOME: fx.home }, sandbox: 'none' })];
      if (!skip) shells.push(createShellTool({ sandbox, env: { PATH: path, HOME: fx.home } }));
      for (const shell of shells) {
        const result = await run(shell, 'git status; echo "PATH=$PATH"');
        assert.doesNotMatch(result.content, /planted/, `PATH=${path}: ${result.content}`);
        assert.equal(existsSync(marker), false, `PATH=${path}: the planted git ran`);
        assert.doesNotMatch(result.content, /PATH=(.*:)?(\.?|\.\/x)(:|$)/m, result.content);
      }
    }
  } finally {
    rmSync(join(fx.ws, 'git'), { force: true });
  }
});
