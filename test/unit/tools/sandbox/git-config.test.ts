import '../../../helpers/own-home';
import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createShellTool } from '../../../../src/tools/builtin/shell';
import { executeTool } from '../../../../src/tools/execute-tool';
import type { ShellSandbox } from '../../../../src/tools/sandbox/sandbox';
import type { ToolResult } from '../../../../src/tools/types';
import { makeToolContext } from '../../../helpers/tool-context';
import { makeSandboxFixture, realProbe, realSandbox, type SandboxFixture, hostGit, GIT_IDENTITY } from '../../../helpers/sandbox-fixture';

// Escape corpus, git's executable configuration (docs/sandbox.md#git): each chain plants a
// core.fsmonitor payload, then a real `git status` runs on the host, unsandboxed, as the user's
// next command would. Each chain is first run unconfined on a copy (the control: the payload
// does run on this machine's git), then in the sandbox, where it must not.
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

const git = hostGit;
const IDENTITY = GIT_IDENTITY;

/** The user's next command, on the host: a payload planted in core.fsmonitor runs here. */
function hostGitStatus(cwd: string): void {
  spawnSync('git', ['status', '--short'], { cwd, encoding: 'utf8' });
}

function run(command: string): Promise<ToolResult> {
  return executeTool(createShellTool({ killGraceMs: 300, drainMs: 2_000, sandbox }), { command }, makeToolContext(fx.ws));
}

const payload = () => `[core]\\n\\tfsmonitor = \\"touch ${pwned}; false\\"\\n`;

/** Runs `chain` unconfined on a copy of the workspace and proves the payload fires there. */
function control(chain: string): void {
  const copy = join(fx.base, 'control');
  cpSync(fx.ws, copy, { recursive: true });
  try {
    execFileSync('bash', ['-c', chain], { cwd: copy, stdio: 'ignore' });
    hostGitStatus(copy);
    assert.ok(existsSync(pwned), `the control: unconfined, the chain plants a payload git runs:\n${chain}`);
  } finally {
    rmSync(pwned, { force: true });
    rmSync(copy, { recursive: true, force: true });
  }
}

test('sandboxed: .git cannot be renamed and replaced by a copy with core.fsmonitor', { skip }, async () => {
  const chain = `mv .git .git-old && mkdir .git && cp -a .git-old/. .git/ && printf "${payload()}" >> .git/config`;
  control(chain);
  const result = await run(chain);
  assert.equal(result.isError, true, result.content);
  assert.match(result.content, /Device or resource busy/);
  assert.match(result.content, /blocked by the sandbox: \.git, \.legion\/ and the other protected paths are fixed in place/);
  // The same without stopping at the first failure.
  const loose = await run(chain.replaceAll(' && ', '; '));
  assert.equal(loose.isError, true, loose.content);
  hostGitStatus(fx.ws);
  assert.equal(existsSync(pwned), false, 'the payload ran on the host');
  assert.equal(existsSync(join(fx.ws, '.git-old')), false);
  assert.doesNotMatch(readFileSync(join(fx.ws, '.git', 'config'), 'utf8'), /fsmonitor/);
});

test('sandboxed: a planted .git/commondir pointing at a config with core.fsmonitor is removed and reported', { skip }, async () => {
  const chain = `cp -r .git/. planted/ 2>/dev/null || (mkdir planted && cp -r .git/. planted/); printf "${payload()}" >> planted/config && echo "$PWD/planted" > .git/commondir`;
  control(chain);
  const result = await run(chain);
  assert.equal(result.isError, true, result.content);
  assert.match(result.content, /blocked by the sandbox: the command changed git's executable configuration \(\.git\/commondir(, planted\/config)?\); reverted/);
  assert.match(result.summary ?? '', /blocked by the sandbox/);
  assert.equal(existsSync(join(fx.ws, '.git', 'commondir')), false);
  hostGitStatus(fx.ws);
  assert.equal(existsSync(pwned), false, 'the payload ran on the host');
});

test('sandboxed: config, hooks, info are read-only; config.worktree and alternates planted are reverted', { skip }, async () => {
  for (const command of [
    `printf "${payload()}" >> .git/config`,
    'echo "#!/bin/sh" > .git/hooks/post-checkout',
    'echo "* filter=x" > .git/info/attributes',
    'mv .git/hooks .git/hooks-old',
    'mv .git/config .git/config-old',
  ]) {
    const result = await run(command);
    assert.equal(result.isError, true, `${command}:\n${result.content}`);
  }
  const planted = await run(`printf "${payload()}" > .git/config.worktree; echo ${fx.outside} > .git/objects/info/alternates; mkdir -p .git/worktrees/evil && echo ${fx.base} > .git/worktrees/evil/commondir`);
  assert.equal(planted.isError, true, planted.content);
  assert.match(planted.content, /config\.worktree/);
  assert.match(planted.content, /alternates/);
  assert.match(planted.content, /worktrees\/evil\/commondir/);
  for (const path of ['config.worktree', 'objects/info/alternates', 'worktrees/evil/commondir']) assert.equal(existsSync(join(fx.ws, '.git', path)), false, path);
  assert.equal(existsSync(join(fx.ws, '.git', 'hooks', 'post-checkout')), false);
  hostGitStatus(fx.ws);
  assert.equal(existsSync(pwned), false);
});

test('sandboxed: ordinary git work still runs (add, commit, checkout -b, log) and nothing is reported', { skip }, async () => {
  const result = await run([
    'echo change >> README.md && echo new > new.txt',
    'git add README.md new.txt',
    `git ${IDENTITY.join(' ')} commit -qm "from the sandbox"`,
    'git checkout -q -b feature',
    'echo more > more.txt && git add more.txt',
    `git ${IDENTITY.join(' ')} commit -qm "on feature"`,
    'git log --oneline | wc -l',
    'git status --short',
  ].join(' && '));
  assert.equal(result.isError, undefined, result.content);
  assert.doesNotMatch(result.content, /blocked/);
  assert.equal(git(fx.ws, 'rev-parse', '--abbrev-ref', 'HEAD').trim(), 'feature');
  assert.equal(git(fx.ws, 'log', '--oneline').trim().split('\n').length, 3);
});

test('sandboxed: git init where there was no repository works; a payload in the new config is removed', { skip }, async () => {
  rmSync(join(fx.ws, '.git'), { recursive: true, force: true });
  const fresh = await run(`git init -q && git add README.md && git ${IDENTITY.join(' ')} commit -qm first && git log --oneline | wc -l`);
  assert.equal(fresh.isError, undefined, fresh.content);
  assert.doesNotMatch(fresh.content, /blocked/);
  assert.equal(git(fx.ws, 'log', '--oneline').trim().split('\n').length, 1);
  rmSync(join(fx.ws, '.git'), { recursive: true, force: true });
  mkdirSync(join(fx.ws, 'sub'));
  writeFileSync(join(fx.ws, 'sub', 'keep'), '');
  const evil = await run(`git init -q && printf "${payload()}" >> .git/config`);
  assert.equal(evil.isError, true, evil.content);
  assert.match(evil.content, /blocked by the sandbox: .*\.git\/config/);
  hostGitStatus(fx.ws);
  assert.equal(existsSync(pwned), false);
  // A `.git` symlink to a planted repository elsewhere in the workspace: git follows it.
  rmSync(join(fx.ws, '.git'), { recursive: true, force: true });
  const linked = await run(`git init -q planted-repo && printf "${payload()}" >> planted-repo/.git/config && ln -s planted-repo/.git .git`);
  assert.equal(linked.isError, true, linked.content);
  assert.match(linked.content, /blocked by the sandbox: .*config/);
  hostGitStatus(fx.ws);
  assert.equal(existsSync(pwned), false, 'the payload behind a .git symlink ran on the host');
});

test('sandboxed: a commondir planted mid-call is removed at once, before the call ends (a host git meanwhile does not read it)', { skip }, async () => {
  const result = await run(`cp -r .git planted && echo "$PWD/planted" > .git/commondir; for i in $(seq 60); do test -e .git/commondir || { echo REMOVED-DURING-THE-CALL; break; }; sleep 0.1; done`);
  assert.match(result.content, /REMOVED-DURING-THE-CALL/);
  assert.match(result.content, /blocked by the sandbox: .*\.git\/commondir/);
  assert.equal(result.isError, true);
});

test('sandboxed: hooks under core.hooksPath in the workspace (.husky/) are guarded like .git/hooks', { skip }, async () => {
  git(fx.ws, 'config', 'core.hooksPath', '.husky');
  mkdirSync(join(fx.ws, '.husky'));
  writeFileSync(join(fx.ws, '.husky', 'pre-commit'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  const hook = `#!/bin/sh\\ntouch ${pwned}\\n`;
  const existing = await run(`printf "${hook}" > .husky/pre-commit`);
  assert.equal(existing.isError, true, existing.content);
  assert.match(existing.content, /Read-only file system/);
  const added = await run(`printf "${hook}" > .husky/post-checkout && chmod +x .husky/post-checkout`);
  assert.equal(added.isError, true, added.content);
  assert.match(added.content, /Read-only file system|blocked by the sandbox: .*\.husky\/post-checkout/);
  git(fx.ws, 'checkout', '-q', '-b', 'other');
  git(fx.ws, 'commit', '-q', '--allow-empty', '-m', 'host commit');
  assert.equal(existsSync(pwned), false, 'a planted hook ran on the host');
  // Without .husky at the start of the call, what the command puts there is removed after it.
  rmSync(join(fx.ws, '.husky'), { recursive: true });
  const fresh = await run(`mkdir .husky && printf "${hook}" > .husky/pre-commit && chmod +x .husky/pre-commit`);
  assert.match(fresh.content, /blocked by the sandbox: .*\.husky/);
  assert.equal(existsSync(join(fx.ws, '.husky', 'pre-commit')), false);
});

test('sandboxed: a config file the workspace\'s config includes (include.path, includeIf) is guarded like .git/config', { skip }, async () => {
  // A shared team config kept in the repository: `git config include.path ../.gitconfig`.
  git(fx.ws, 'config', 'include.path', '../.gitconfig');
  git(fx.ws, 'config', 'includeIf.gitdir:/.path', '../tools/git/extra.cfg');
  writeFileSync(join(fx.ws, '.gitconfig'), '[core]\n\tautocrlf = false\n');
  const existing = `printf "${payload()}" >> .gitconfig`;
  control(existing);
  const written = await run(existing);
  assert.equal(written.isError, true, written.content);
  assert.match(written.content, /Read-only file system/);
  // Not there when the call starts: what the command plants is removed after it.
  const planted = `mkdir -p tools/git && printf "${payload()}" > tools/git/extra.cfg`;
  control(planted);
  const fresh = await run(planted);
  assert.equal(fresh.isError, true, fresh.content);
  assert.match(fresh.content, /blocked by the sandbox: .*tools\/git\/extra\.cfg/);
  hostGitStatus(fx.ws);
  assert.equal(existsSync(pwned), false, 'an included config ran its payload on the host');
});

test('sandboxed: the user\'s own git config leading into the workspace (~/.gitconfig a link into a dotfiles repository, an include) is guarded like .git/config', { skip }, async () => {
  // A dotfiles repository opened as the workspace: ~/.gitconfig is a link to its gitconfig, and
  // ~/.config/git/config includes a file of it. Every git the user runs anywhere reads both.
  const home = join(fx.base, 'user-home');
  mkdirSync(join(home, '.config', 'git'), { recursive: true });
  mkdirSync(join(fx.ws, 'dotfiles'));
  const linked = join(fx.ws, 'dotfiles', 'gitconfig');
  writeFileSync(linked, '[color]\n\tui = auto\n');
  symlinkSync(linked, join(home, '.gitconfig'));
  writeFileSync(join(home, '.config', 'git', 'config'), `[include]\n\tpath = ${join(fx.ws, 'dotfiles', 'team.gitconfig')}\n`);
  const saved = { HOME: process.env.HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL };
  process.env.HOME = home;
  delete process.env.XDG_CONFIG_HOME;
  delete process.env.GIT_CONFIG_GLOBAL;
  try {
    // The control: unconfined, a payload appended to the linked file runs at the user's next git.
    const original = readFileSync(linked, 'utf8');
    execFileSync('bash', ['-c', `printf "${payload()}" >> dotfiles/gitconfig`], { cwd: fx.ws });
    hostGitStatus(fx.ws);
    assert.ok(existsSync(pwned), 'the control: the linked global config runs its payload');
    rmSync(pwned);
    writeFileSync(linked, original);

    const appended = await run(`printf "${payload()}" >> dotfiles/gitconfig`);
    assert.equal(appended.isError, true, appended.content);
    assert.match(appended.content, /Read-only file system/);
    const planted = await run(`printf "${payload()}" > dotfiles/team.gitconfig`);
    assert.equal(planted.isError, true, planted.content);
    assert.match(planted.content, /blocked by the sandbox: .*dotfiles\/team\.gitconfig/);
    hostGitStatus(fx.ws);
    assert.equal(existsSync(pwned), false, 'the user\'s global config ran a payload planted from the sandbox');
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
});

test('sandboxed: the user\'s git config reached only through linked folders (~/.config and an included folder linking into the workspace) cannot be created or edited', { skip }, async () => {
  // ~/.config → <ws>/dot/config with no git/config yet; ~/.gitconfig includes ~/.gitx/local, ~/.gitx → <ws>/dot/gitx.
  const home = join(fx.base, 'linked-home');
  mkdirSync(home, { recursive: true });
  mkdirSync(join(fx.ws, 'dot', 'config'), { recursive: true });
  mkdirSync(join(fx.ws, 'dot', 'gitx'), { recursive: true });
  const local = join(fx.ws, 'dot', 'gitx', 'local');
  writeFileSync(local, '[color]\n\tui = auto\n');
  symlinkSync(join(fx.ws, 'dot', 'config'), join(home, '.config'));
  symlinkSync(join(fx.ws, 'dot', 'gitx'), join(home, '.gitx'));
  writeFileSync(join(home, '.gitconfig'), '[include]\n\tpath = ~/.gitx/local\n');
  const saved = { HOME: process.env.HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL: process.env.GIT_CONFIG_GLOBAL };
  process.env.HOME = home;
  delete process.env.XDG_CONFIG_HOME;
  delete process.env.GIT_CONFIG_GLOBAL;
  try {
    // The control: unconfined, a config created there runs its payload at the user's next git.
    execFileSync('bash', ['-c', `mkdir -p dot/config/git && printf "${payload()}" > dot/config/git/config`], { cwd: fx.ws });
    hostGitStatus(fx.ws);
    assert.ok(existsSync(pwned), 'the control: ~/.config/git/config through the link runs its payload');
    rmSync(pwned);
    rmSync(join(fx.ws, 'dot', 'config', 'git'), { recursive: true });

    const created = await run(`mkdir -p dot/config/git && printf "${payload()}" > dot/config/git/config`);
    assert.equal(created.isError, true, created.content);
    assert.match(created.content, /blocked by the sandbox: .*dot\/config\/git\/config/);
    const edited = await run(`printf "${payload()}" >> dot/gitx/local`);
    assert.equal(edited.isError, true, edited.content);
    assert.match(edited.content, /Read-only file system/);
    hostGitStatus(fx.ws);
    assert.equal(existsSync(pwned), false, 'the user\'s git config, reached through a linked folder, ran a payload planted from the sandbox');
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
});

test('sandboxed: a planted submodule (gitlink + .gitmodules + a .git file naming a planted git dir) does not run its config on the host', { skip }, async () => {
  const chain = [
    'git init -q plantsrc && cp -r plantsrc/.git planted',
    `printf "${payload()}" >> planted/config`,
    'mkdir s && echo "gitdir: ../planted" > s/.git',
    `printf '[submodule "s"]\\n\\tpath = s\\n' > .gitmodules`,
    'git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),s',
  ].join(' && ');
  control(chain);
  const result = await run(chain);
  assert.equal(result.isError, true, result.content);
  assert.match(result.content, /blocked by the sandbox: .*planted\/config/);
  hostGitStatus(fx.ws);
  assert.equal(existsSync(pwned), false, 'the planted submodule ran its payload on the host');
});

test('sandboxed: a planted submodule where the workspace scan does not look (node_modules/, deeper than 8 levels) does not run its config on the host', { skip }, async () => {
  for (const dir of ['node_modules/s', 'a/b/c/d/e/f/g/h/i/s']) {
    const chain = [
      `git init -q plantsrc && mkdir -p ${dir} && cp -r plantsrc/.git ${dir}/.git`,
      `printf "${payload()}" >> ${dir}/.git/config`,
      `printf '[submodule "s"]\\n\\tpath = ${dir}\\n' > .gitmodules`,
      `git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),${dir}`,
    ].join(' && ');
    control(chain);
    const result = await run(chain);
    assert.equal(result.isError, true, `${dir}: ${result.content}`);
    assert.match(result.content, new RegExp(`blocked by the sandbox: .*${dir.replaceAll('/', '\\/')}\\/\\.git\\/config`));
    hostGitStatus(fx.ws);
    assert.equal(existsSync(pwned), false, `the submodule planted at ${dir} ran its payload on the host`);
    rmSync(join(fx.ws, 'plantsrc'), { recursive: true, force: true });
  }
});

test('sandboxed: the config of a repository nested in the workspace is guarded too (it can be made a submodule)', { skip }, async () => {
  execFileSync('git', ['init', '-q', join(fx.ws, 'vendor', 'lib')]);
  const chain = [
    `printf "${payload()}" >> vendor/lib/.git/config`,
    `printf '[submodule "lib"]\\n\\tpath = vendor/lib\\n' > .gitmodules`,
    'git update-index --add --cacheinfo 160000,$(git rev-parse HEAD),vendor/lib',
  ].join(' && ');
  control(chain);
  const result = await run(chain);
  assert.equal(result.isError, true, result.content);
  assert.match(result.content, /blocked by the sandbox: .*vendor\/lib\/\.git\/config/);
  assert.doesNotMatch(readFileSync(join(fx.ws, 'vendor', 'lib', '.git', 'config'), 'utf8'), /fsmonitor/);
  hostGitStatus(fx.ws);
  assert.equal(existsSync(pwned), false);
});

/** The user's next command in a subdirectory (`cd src && git status`): git discovers from there. */
function hostGitStatusIn(dir: string): void {
  spawnSync('git', ['status', '--short'], { cwd: dir, encoding: 'utf8' });
}

test('sandboxed: a directory made into a bare-shaped git directory (HEAD, objects, config with core.worktree) does not run its config on the host', { skip }, async () => {
  // git discovers a directory holding HEAD + objects/ + refs/ as a git directory itself (no
  // `.git` entry anywhere): the user's next `git status` in that directory reads its config.
  mkdirSync(join(fx.ws, 'src'));
  writeFileSync(join(fx.ws, 'src', 'main.c'), 'int main;\n');
  const chain = (dir: string) =>
    `git init -q --bare ${dir} && git --git-dir=${dir} config core.bare false && git --git-dir=${dir} config core.worktree . && ` +
    `git --git-dir=${dir} config core.fsmonitor "touch ${pwned}; false"`;
  // The control: unconfined, `cd src && git status` on the host runs the payload.
  const copy = join(fx.base, 'control');
  cpSync(fx.ws, copy, { recursive: true });
  execFileSync('bash', ['-c', chain('src')], { cwd: copy, stdio: 'ignore' });
  hostGitStatusIn(join(copy, 'src'));
  assert.ok(existsSync(pwned), 'the control: the bare-shaped directory runs its payload');
  rmSync(pwned, { force: true });
  rmSync(copy, { recursive: true, force: true });

  const result = await run(chain('src'));
  assert.equal(result.isError, true, result.content);
  assert.match(result.content, /blocked by the sandbox: .*src\/config/);
  hostGitStatusIn(join(fx.ws, 'src'));
  assert.equal(existsSync(pwned), false, 'the bare-shaped src/ ran its payload on the host');
  assert.equal(existsSync(join(fx.ws, 'src', 'main.c')), true);

  // A workspace that is not a repository: its root itself made bare-shaped.
  rmSync(join(fx.ws, '.git'), { recursive: true, force: true });
  const root = await run(chain('.'));
  assert.equal(root.isError, true, root.content);
  assert.match(root.content, /blocked by the sandbox: .*config/);
  hostGitStatusIn(fx.ws);
  assert.equal(existsSync(pwned), false, 'the bare-shaped workspace root ran its payload on the host');
});

test('sandboxed: the check after the call never removes or writes through a symlink leading out of the workspace', { skip }, async () => {
  mkdirSync(join(fx.outside, 'victim'));
  writeFileSync(join(fx.outside, 'victim', 'config'), 'precious\n');
  writeFileSync(join(fx.outside, 'victim', 'commondir'), 'precious\n');
  mkdirSync(join(fx.ws, 'evil-hooks'));
  writeFileSync(join(fx.ws, 'evil-hooks', 'post-checkout'), `#!/bin/sh\ntouch ${pwned}\n`, { mode: 0o755 });
  const result = await run(`git init -q sub && ln -s ${fx.outside} sub/.git/worktrees && rm -rf sub/.git/hooks && ln -s ../../evil-hooks sub/.git/hooks`);
  assert.equal(readFileSync(join(fx.outside, 'victim', 'config'), 'utf8'), 'precious\n', 'a file outside was removed through the symlink');
  assert.equal(readFileSync(join(fx.outside, 'victim', 'commondir'), 'utf8'), 'precious\n');
  assert.match(result.content, /blocked by the sandbox: .*sub\/\.git\/hooks/, 'a symlinked hooks directory in a new repository is removed');
  assert.equal(existsSync(join(fx.ws, 'sub', '.git', 'hooks')), false);
});
