import '../../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createAuthorizer, workspaceRealPath } from '../../../../src/authz/authorizer';
import { evaluateRules } from '../../../../src/authz/rules/evaluate';
import type { Participant } from '../../../../src/collective/participant';
import { loadError, rulesFrom, shell, shippedRules, SHIPPED_RULES } from '../../../helpers/rules';
import { makeTempDir, type TempDir } from '../../../helpers/tmp';

/**
 * The shipped read-only allow-list reads only what file_read may read: a real workspace with
 * a secret outside it, Legion's state, a secret file and symlinks to each; every command the
 * authorizer allows is then run by bash, and its output must hold no byte of any secret.
 */
const OUTSIDE_SECRET = 'OUTSIDE-SECRET-5b1f';
const TOKEN = 'LEGION-TOKEN-77c2';
const ENV_SECRET = 'ENV-SECRET-a9d0';

let temp: TempDir;
let ws: string;
let outside: string;
const USER: Participant = { id: 'user', kind: 'user', name: 'You', description: '', status: 'active', approvalAuthority: '*' };

before(async () => {
  temp = await makeTempDir('legion-read-only-');
  ws = join(temp.dir, 'ws');
  outside = join(temp.dir, 'outside');
  await mkdir(join(ws, 'docs'), { recursive: true });
  await mkdir(join(ws, '.legion'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(outside, 'secret.txt'), `${OUTSIDE_SECRET}\n`);
  await writeFile(join(ws, '.legion', 'web-token'), `${TOKEN}\n`);
  await writeFile(join(ws, '.env'), `KEY=${ENV_SECRET}\n`);
  await writeFile(join(ws, 'README.md'), 'hello\n');
  await symlink(join(outside, 'secret.txt'), join(ws, 'docs', 'notes.txt'));
  await symlink(outside, join(ws, 'docs', 'more'));
  await symlink('../.legion/web-token', join(ws, 'docs', 'token'));
  await symlink('../.env', join(ws, 'docs', 'config'));
  if (existsSync('/etc/shadow')) await symlink('/etc/shadow', join(ws, 'docs', 'shadow'));
  spawnSync('git', ['init', '-q'], { cwd: ws });
  spawnSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', 'add', 'README.md'], { cwd: ws });
  spawnSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', 'commit', '-qm', 'init'], { cwd: ws });
});
after(() => temp.cleanup());

const authorize = () => createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), workspaceRoot: ws, getParticipant: () => USER, realPath: workspaceRealPath(ws) });
const decide = (command: string) => authorize()({ toolName: 'shell', input: { command }, participantId: 'user', sessionId: 's', chain: ['user'] });

test('the issue\'s reads outside the workspace or into .legion/ are not allowed', () => {
  const table: [string, RegExp][] = [
    ['git diff /dev/null /etc/shadow', /"\/dev\/null" is outside the workspace/],
    [`git diff /dev/null ${join(outside, 'secret.txt')}`, /outside the workspace/],
    ['git blame --contents=/etc/shadow README.md', /--contents: "\/etc\/shadow" is outside the workspace/],
    ['git blame --contents /etc/shadow README.md', /--contents: "\/etc\/shadow" is outside/],
    ['git blame -S /etc/passwd README.md', /-S: "\/etc\/passwd" is outside/],
    ['cat docs/notes.txt', /outside the workspace \(through a symbolic link from "docs\/notes.txt"\)/],
    ['ABS/docs/notes.txt', /outside the workspace \(through a symbolic link from "docs\/notes.txt"\)/],
    ['ABS/docs/more/secret.txt', /through a symbolic link/],
    ['ABS/docs/token', /inside .legion\/.*through a symbolic link/],
    ['head -n 3 docs/more/secret.txt', /through a symbolic link/],
    ['cat docs/token', /inside .legion\/.*through a symbolic link/],
    ['cat docs/config', /file_read of ".env" is not allowed.*through a symbolic link/],
    ['cat .legion/web-token', /\.legion/],
    ['cat .env', /secret file|\.env/],
    ['cat ../outside/secret.txt', /outside the workspace/],
    ['git -C /etc status', /git option "-C"/],
    ['git --git-dir=/tmp/x log', /git option "--git-dir=\/tmp\/x"/],
    ['git --work-tree=/ status', /git option/],
    ['git -c core.pager=x log', /git option "-c"/],
    ['git log --output=/tmp/x', /"--output" is not known to be read-only/],
    ['git diff --no-index a b', /"--no-index"/],
    ['git diff --ext-diff', /"--ext-diff"/],
    ['git diff -O/etc/shadow', /"-O"/],
    ['git show HEAD:.legion/web-token', /\.legion/],
    ['git show HEAD:../outside/secret.txt', /outside the workspace/],
    ['git ls-files -X /etc/shadow', /-X: "\/etc\/shadow" is outside/],
    ['git ls-files --exclude-per-directory=../../etc/passwd', /not known to be read-only/],
    ['wc --files0-from=/etc/passwd', /not known to be read-only/],
    ['date -f /etc/shadow', /"-f" is not known/],
    ['date --reference=/etc/shadow', /outside the workspace/],
    ['ls -L docs', /"-L" is not known/],
    ['ls docs/m*', /file-name pattern/],
    ['cat .e?v', /names a secret file \(matched `cat .env`\)/], // the pattern read as the name bash expands it to (deny-pattern-names)
    ['git branch new-branch', /the argument "new-branch"/],
    ['tail --follow=name /etc/passwd', /outside the workspace/],
    ['cat docs/more/../outside/secret.txt', /outside the workspace \(through a symbolic link from "docs\/outside\/secret.txt"\)/],
    ['ls docs/more/..', /outside the workspace/],
  ];
  if (existsSync('/etc/shadow')) table.push(['cat docs/shadow', /outside the workspace \(through a symbolic link/]);
  for (const [written, why] of table) {
    // `ABS/x`: `cat` of the absolute path of workspace file x.
    const command = written.startsWith('ABS/') ? `cat ${join(ws, written.slice(4))}` : written;
    const verdict = decide(command);
    assert.notEqual(verdict.decision, 'allow', command);
    assert.match(verdict.reason, why, `${command}: ${verdict.reason}`);
  }
});

test('an index path (`:0:private/x`, `:private/x`) is checked as the path it names: a user\'s file_read deny holds', () => {
  const rules = rulesFrom(
    'version: 1\nrules:\n  - { id: read, decision: allow, tool: file_read }\n  - { id: no-private, decision: deny, tool: file_read, match: { path: "private/**" } }\n' +
      '  - { id: ro, decision: allow, tool: shell, match: { command: { readOnly: [git show, git diff] } } }\n',
  );
  for (const command of ['git show HEAD:private/a.txt', 'git show :0:private/a.txt', 'git show :2:private/a.txt', 'git show :private/a.txt', 'git diff :0:private/a.txt HEAD:src/a.ts']) {
    assert.equal(shell(rules, command).decision, null, command);
    assert.match(shell(rules, command).reason, /file_read of "private\/a.txt" is not allowed/, command);
  }
  assert.equal(shell(rules, 'git show :0:src/a.ts').decision, 'allow');
  assert.equal(shell(rules, 'git show :src/a.ts').decision, 'allow');
});

test('ordinary reads of the workspace stay allowed', () => {
  for (const command of [
    'cat README.md', 'head -n 5 README.md', 'head -5 README.md', 'tail -n +2 README.md', 'wc -l README.md docs', 'ls -la docs', 'ls',
    'pwd', 'echo hi "there"', 'date +%Y', 'date -u', 'uname -a', 'whoami', 'true',
    'git status', 'git status --short -- docs', 'git --no-pager log --oneline -5', 'git log -n 3 --format=%h', 'git diff HEAD~1..HEAD -- README.md',
    'git show HEAD:README.md', 'git blame -L 1,2 README.md', 'git ls-files -z', 'git rev-parse --show-toplevel HEAD', 'git branch -a',
    'cat README.md | head -1 && git status 2>/dev/null', `cat ${join(ws, 'README.md')}`, 'cat missing-file.txt',
  ]) {
    const verdict = decide(command);
    assert.equal(verdict.decision, 'allow', `${command}: ${verdict.reason}`);
  }
});

test('every read the authorizer allows returns no byte of a secret (bash runs it)', () => {
  const attempts = [
    'cat docs/notes.txt', 'cat docs/more/secret.txt', 'cat docs/token', 'cat docs/config', 'cat .legion/web-token', 'cat .env',
    'git diff /dev/null docs/notes.txt', `git diff /dev/null ${join(outside, 'secret.txt')}`, 'git diff --no-index /dev/null docs/notes.txt',
    `git blame --contents=${join(outside, 'secret.txt')} README.md`, 'git blame --contents=docs/notes.txt README.md',
    'git blame --contents docs/token README.md', 'head docs/*', 'tail docs/more/*', 'wc -c docs/notes.txt', 'ls docs/more',
    'cat README.md docs/notes.txt', 'cat README.md; cat docs/token', 'grep -r SECRET docs', 'cat "docs/notes.txt"', "cat 'docs'/notes.txt",
    'cat docs/not\\es.txt', 'cat ./docs/../docs/notes.txt', 'cat docs//notes.txt', 'cat docs/./token', 'git show HEAD:docs/notes.txt',
    'tail -n 1 docs/config', 'cat .legion/../docs/notes.txt', 'cat $(echo docs/notes.txt)', 'cat ${x:-docs/notes.txt}',
    // `..` after a link is the parent of the link's target (the kernel's order), not `docs/`.
    'cat docs/more/../outside/secret.txt', 'head -n 1 docs/more/../outside/secret.txt', `cat ${join(ws, 'docs', 'more', '..', 'outside', 'secret.txt')}`,
    'git blame --contents=docs/more/../outside/secret.txt README.md', 'cat docs/more/../ws/docs/notes.txt',
  ];
  const leaked: string[] = [];
  for (const command of attempts) {
    if (decide(command).decision !== 'allow') continue;
    const run = spawnSync('/bin/bash', ['-c', command], { cwd: ws, encoding: 'utf8', timeout: 5_000 });
    const output = `${run.stdout}${run.stderr}`;
    if ([OUTSIDE_SECRET, TOKEN, ENV_SECRET].some((s) => output.includes(s))) leaked.push(command);
  }
  assert.deepEqual(leaked, []);
  // The fixture is real: bash does read the secret through the link.
  assert.match(spawnSync('/bin/bash', ['-c', 'cat docs/notes.txt'], { cwd: ws, encoding: 'utf8' }).stdout, new RegExp(OUTSIDE_SECRET));
});

test('a tilde bash expands after a line continuation (`x=\\<newline>~`) is not read as a literal path (bash runs it)', async () => {
  // A directory the attacker planted earlier: `x=` holding `home` -> outside. bash expands
  // `x=\<newline>~/secret.txt` to `x=/home/secret.txt` (HOME=/home); Legion must not check the
  // literal `x=~/secret.txt` (absent, inside the workspace) and allow it.
  await mkdir(join(ws, 'x=', ''), { recursive: true });
  await symlink(outside, join(ws, 'x=', 'home'));
  const command = 'cat x=\\\n~/secret.txt';
  const run = spawnSync('/bin/bash', ['-c', command], { cwd: ws, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: '/home' } });
  assert.match(run.stdout, new RegExp(OUTSIDE_SECRET)); // the attack is real
  const verdict = decide(command);
  assert.notEqual(verdict.decision, 'allow', verdict.reason);
  assert.match(verdict.reason, /tilde expansion/);
});

test('a workspace inside a larger repository (no .git of its own): git\'s read-only commands ask (bash shows what they would print)', async () => {
  // The repository above the workspace (a monorepo, a dotfiles repository in $HOME) holds a
  // file outside the workspace; git's paths are the repository's, so `HEAD:f` names it.
  const repo = join(temp.dir, 'mono');
  const inner = join(repo, 'pkg');
  await mkdir(inner, { recursive: true });
  await writeFile(join(repo, 'sibling.txt'), `${OUTSIDE_SECRET}\n`);
  await writeFile(join(inner, 'README.md'), 'pkg\n');
  const id = ['-c', 'user.email=t@t', '-c', 'user.name=t'];
  spawnSync('git', ['init', '-q'], { cwd: repo });
  spawnSync('git', [...id, 'add', '.'], { cwd: repo });
  spawnSync('git', [...id, 'commit', '-qm', 'init'], { cwd: repo });
  const decideIn = (command: string) =>
    createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), workspaceRoot: inner, getParticipant: () => USER, realPath: workspaceRealPath(inner) })({
      toolName: 'shell', input: { command }, participantId: 'user', sessionId: 's', chain: ['user'],
    });
  for (const command of ['git show HEAD:sibling.txt', 'git log -p -1', 'git show HEAD', 'git diff HEAD~0', 'git status']) {
    const verdict = decideIn(command);
    assert.notEqual(verdict.decision, 'allow', command);
    assert.match(verdict.reason, /no \.git of its own/, `${command}: ${verdict.reason}`);
  }
  // The attack is real: run in the workspace, git prints the file outside it.
  assert.match(spawnSync('git', ['show', 'HEAD:sibling.txt'], { cwd: inner, encoding: 'utf8' }).stdout, new RegExp(OUTSIDE_SECRET));
  // Reads that are not git's stay allowed there.
  assert.equal(decideIn('cat README.md').decision, 'allow');
});

test('without a realPath, a read-only command naming a path asks (symlinks cannot be seen)', () => {
  const outcome = evaluateRules(shippedRules(), { toolName: 'shell', input: { command: 'cat README.md' }, participantId: 'user', workspaceRoot: ws });
  assert.equal(outcome.decision, null);
  assert.match(outcome.reason, /cannot follow symbolic links/);
  // git needs to see that the workspace is the top of its repository.
  const git = evaluateRules(shippedRules(), { toolName: 'shell', input: { command: 'git status' }, participantId: 'user', workspaceRoot: ws });
  assert.equal(git.decision, null);
  assert.match(git.reason, /whether the workspace is the top of its git repository/);
  assert.equal(evaluateRules(shippedRules(), { toolName: 'shell', input: { command: 'pwd' }, participantId: 'user', workspaceRoot: ws }).decision, 'allow');
});

test('a user rule that denies file_read of a path also keeps the read-only shell commands from it', () => {
  const rules = rulesFrom(
    'version: 1\nrules:\n  - { id: read, decision: allow, tool: file_read }\n  - { id: no-private, decision: deny, tool: file_read, match: { path: "private/**" } }\n' +
      '  - { id: ro, decision: allow, tool: shell, match: { command: { readOnly: [cat, ls] } } }\n',
  );
  assert.equal(shell(rules, 'cat src/a.ts').decision, 'allow');
  assert.equal(shell(rules, 'cat private/a.txt').decision, null);
  assert.match(shell(rules, 'cat private/a.txt').reason, /ro: file_read of "private\/a.txt" is not allowed/);
  assert.equal(shell(rules, 'head src/a.ts').decision, null); // not named by the rule
});

test('readOnly is checked when the rules load', () => {
  assert.match(loadError('version: 1\nrules:\n  - { id: r, decision: allow, tool: shell, match: { command: { readOnly: [cat, rm] } } }\n'), /"rm" is not a known read-only command/);
  assert.match(loadError('version: 1\nrules:\n  - { id: r, decision: deny, tool: shell, match: { command: { readOnly: [cat] } } }\n'), /readOnly only applies to decision: allow/);
  assert.match(loadError('version: 1\nrules:\n  - { id: r, decision: allow, tool: file_read, match: { path: { readOnly: [cat] } } }\n'), /applies only to the command of a rule for the tool shell/);
  assert.match(loadError('version: 1\nrules:\n  - { id: r, decision: allow, tool: "shell|file_read", match: { command: { words: [git] } } }\n'), /applies only to the command of a rule for the tool shell/);
});

test('a read-only command that reads paths is not allowed in a line with a command that could change them', () => {
  const rules = rulesFrom(
    readFileSync(SHIPPED_RULES, 'utf8'),
    'version: 1\nrules:\n  - { id: cd, decision: allow, tool: shell, match: { command: { words: [cd] } } }\n' +
      '  - { id: ln, decision: allow, tool: shell, match: { command: { words: [ln] } } }\n  - { id: npm-run, decision: allow, tool: shell, match: { command: "npm run *" } }\n',
  );
  const authorizeWith = createAuthorizer({ gitConfigPaths: () => [], ruleSet: rules, workspaceRoot: ws, getParticipant: () => USER, realPath: workspaceRealPath(ws) });
  const decideWith = (command: string) => authorizeWith({ toolName: 'shell', input: { command }, participantId: 'user', sessionId: 's', chain: ['user'] });
  for (const command of [`cd ${outside} && cat secret.txt`, `ln -s ${join(outside, 'secret.txt')} docs/fresh; cat docs/fresh`, `ln -s ${join(outside, 'secret.txt')} docs/fresh2 | head docs/fresh2`, 'npm run build && cat README.md']) {
    const verdict = decideWith(command);
    assert.notEqual(verdict.decision, 'allow', command);
    assert.match(verdict.reason, /reads paths checked before the line runs, and `(cd|ln|npm) .*` in the same line could change them/, command);
  }
  // Alone, or next to read-only commands without paths, they stay allowed.
  for (const command of ['cd docs', 'npm run build 2>&1 | tail -n 20', 'npm run lint && git status', 'cat README.md | head -n 1']) {
    assert.equal(decideWith(command).decision, 'allow', command);
  }
  // And the attack really reads the secret when run (so the refusal matters).
  const run = spawnSync('/bin/bash', ['-c', `cd ${outside} && cat secret.txt`], { cwd: ws, encoding: 'utf8' });
  assert.match(run.stdout, new RegExp(OUTSIDE_SECRET));
});

test('a refused read costs no more filesystem lookups than it must: paths as written first, the repository once per line, then the paths resolved', () => {
  const looked: string[] = [];
  const realPathOf = workspaceRealPath(ws);
  const counting = (path: string) => (looked.push(path), realPathOf(path));
  const outcome = (command: string) => {
    looked.length = 0;
    return evaluateRules(shippedRules(), { toolName: 'shell', input: { command }, participantId: 'user', workspaceRoot: ws, realPath: counting });
  };
  // No .git of its own: the repository refuses before any argument is resolved.
  looked.length = 0;
  const bare = evaluateRules(shippedRules(), { toolName: 'shell', input: { command: 'git log -- README.md docs' }, participantId: 'user', workspaceRoot: join(temp.dir, 'outside'), realPath: (p) => (looked.push(p), workspaceRealPath(outside)(p)) });
  assert.equal(bare.decision, null);
  assert.match(bare.reason, /no \.git of its own/);
  assert.deepEqual(looked, ['.git']);
  // A path refused as written is never resolved (and the repository is not looked up).
  assert.match(outcome('git diff README.md /etc/shadow').reason, /"\/etc\/shadow" is outside the workspace/);
  assert.deepEqual(looked, []);
  // Two git commands in one line: the repository is looked up once, each path once (README.md, named by both, too).
  assert.equal(outcome('git status README.md && git diff README.md docs').decision, 'allow');
  assert.deepEqual(looked, ['.git', 'README.md', 'docs']);
  // A command no rule allows refuses the line before any lookup, wherever it stands in the line.
  assert.match(outcome('git diff README.md docs && npm run build').reason, /no rule allows `npm run build`/);
  assert.deepEqual(looked, []);
});
