import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createShellTool } from '../../../../src/tools/builtin/shell';
import { executeTool } from '../../../../src/tools/execute-tool';
import { workspaceHooksPaths } from '../../../../src/tools/sandbox/git-guard';
import type { ShellSandbox } from '../../../../src/tools/sandbox/sandbox';
import type { ToolResult } from '../../../../src/tools/types';
import { makeToolContext } from '../../../helpers/tool-context';
import { makeSandboxFixture, realProbe, realSandbox, type SandboxFixture, hostGit } from '../../../helpers/sandbox-fixture';

const probe = await realProbe();
const skip = probe.kind === 'available' ? false : `no sandbox on this machine: ${probe.reason}`;

/**
 * Projects that keep their hooks in the work tree often link them into place
 * (`ln -s ../../scripts/pre-commit .git/hooks/pre-commit`): git runs the file the link leads to.
 * `.git/hooks` was read-only in the sandbox, the link with it, but its target was an ordinary
 * work-tree file: a sandboxed command appended to `scripts/pre-commit` (or created the missing
 * target of a dangling link) and the user's next `git commit` / `git push` ran it, unsandboxed.
 * The targets of linked hooks are guarded like the hooks (and, through the same list, ask a
 * person for the file tools).
 */
let fx: SandboxFixture;
let sandbox: ShellSandbox;
let pwned: string;
beforeEach(async () => {
  fx = await makeSandboxFixture();
  sandbox = realSandbox(fx, probe);
  pwned = join(fx.outside, 'PWNED');
  git(fx.ws, 'add', 'README.md');
  git(fx.ws, 'commit', '-qm', 'init');
  mkdirSync(join(fx.ws, 'scripts'), { recursive: true });
  writeFileSync(join(fx.ws, 'scripts', 'pre-commit'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  const hooks = join(fx.ws, '.git', 'hooks');
  mkdirSync(hooks, { recursive: true });
  rmSync(join(hooks, 'pre-commit'), { force: true });
  symlinkSync('../../scripts/pre-commit', join(hooks, 'pre-commit'));
  // Dangling: the project links a hook it has not written yet.
  symlinkSync('../../scripts/commit-msg', join(hooks, 'commit-msg'));
});
afterEach(async () => {
  sandbox?.dispose();
  await fx?.cleanup();
});

const git = hostGit;

function run(command: string): Promise<ToolResult> {
  return executeTool(createShellTool({ killGraceMs: 300, drainMs: 2_000, sandbox }), { command }, makeToolContext(fx.ws));
}

test('the work-tree files that linked hooks lead to (a dangling link\'s too) are among git\'s guarded paths', () => {
  const guarded = workspaceHooksPaths(fx.ws, { HOME: fx.home, GIT_CONFIG_GLOBAL: join(fx.home, 'gitconfig') });
  assert.ok(guarded.includes(join(fx.ws, 'scripts', 'pre-commit')), guarded.join(', '));
  assert.ok(guarded.includes(join(fx.ws, 'scripts', 'commit-msg')), `the dangling link's target: ${guarded.join(', ')}`);
  assert.ok(!guarded.includes(join(fx.ws, 'scripts')), 'only the targets, not their folder');
});

test('sandboxed: a command cannot change or create the file a linked hook runs at the user\'s next commit', { skip }, async () => {
  // The control: git runs what the link leads to.
  writeFileSync(join(fx.ws, 'scripts', 'pre-commit'), `#!/bin/sh\ntouch ${pwned}.control\n`);
  git(fx.ws, 'commit', '-q', '--allow-empty', '-m', 'control');
  assert.ok(existsSync(`${pwned}.control`), 'git runs the linked hook\'s target');
  writeFileSync(join(fx.ws, 'scripts', 'pre-commit'), '#!/bin/sh\nexit 0\n');

  const result = await run(`printf 'touch ${pwned}\\n' >> scripts/pre-commit; printf '#!/bin/sh\\ntouch ${pwned}\\n' > scripts/commit-msg; chmod +x scripts/commit-msg; true`);
  assert.match(result.content, /Read-only file system|blocked by the sandbox/, result.content);
  assert.equal(readFileSync(join(fx.ws, 'scripts', 'pre-commit'), 'utf8'), '#!/bin/sh\nexit 0\n');
  assert.equal(existsSync(join(fx.ws, 'scripts', 'commit-msg')), false, 'a planted target of a dangling link is removed');
  git(fx.ws, 'commit', '-q', '--allow-empty', '-m', 'host commit');
  assert.equal(existsSync(pwned), false, 'the user\'s commit ran what the sandboxed command wrote');
});
