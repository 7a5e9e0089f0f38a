import '../../../helpers/own-home';
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, utimesSync, realpathSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { createAuthorizer, workspaceRealPath, type RealPathSystem } from '../../../../src/authz/authorizer';
import type { RealPathScope } from '../../../../src/authz/rules/evaluate';
import { ENTRY_LINK, FolderListings, RECENT_MS } from '../../../../src/authz/dir-listings';
import type { Participant } from '../../../../src/collective/participant';
import { shippedRules } from '../../../helpers/rules';
import { makeTempDir, type TempDir } from '../../../helpers/tmp';

/**
 * `workspaceRealPath` resolves with one lstat per component below the root where it can (or
 * from a folder listing checked current: dir-listings.ts), and with realpath(3) otherwise: it
 * must give realpath's answer for every shape of path, and nothing it remembers between two
 * calls may hide a change (a symlink can change in between).
 */
let temp: TempDir;
let ws: string;
let outside: string;
const USER: Participant = { id: 'user', kind: 'user', name: 'You', description: '', status: 'active', approvalAuthority: '*' };

before(async () => {
  temp = await makeTempDir('legion-real-path-');
  ws = join(temp.dir, 'ws');
  outside = join(temp.dir, 'outside');
  mkdirSync(join(ws, 'src', 'deep'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'secret\n');
  writeFileSync(join(ws, 'package.json'), '{}');
  writeFileSync(join(ws, 'src', 'deep', 'a.ts'), '');
  symlinkSync(join(outside, 'secret.txt'), join(ws, 'leak.txt'));
  symlinkSync(outside, join(ws, 'out'));
  symlinkSync('src', join(ws, 'alias'));
  symlinkSync('missing-target', join(ws, 'dangling'));
  symlinkSync('loop', join(ws, 'loop'));
});
after(() => temp.cleanup());

/** What the resolution must answer: realpath(3) of the path as written, relative to the real root. */
function reference(root: string, written: string): string | null {
  const realRoot = realpathSync(root);
  const path = isAbsolute(written) ? written : `${realRoot}${sep}${written}`;
  if (!existsSync(path)) return null;
  try {
    const real = realpathSync.native(path);
    const rel = relative(realRoot, real);
    return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? real : rel.split(sep).join('/');
  } catch {
    return null;
  }
}

test('workspaceRealPath gives realpath\'s answer for files, directories, links, missing paths and odd spellings', () => {
  const realPath = workspaceRealPath(ws);
  const paths = [
    '.', '', './', 'package.json', './package.json', 'package.json/', 'package.json/.', 'package.json/x', 'src', 'src/', 'src//deep/a.ts',
    'src/deep/./a.ts', 'src/deep/a.ts/', 'src/deep/../deep/a.ts', 'src/..', '..', '../outside/secret.txt', 'missing', 'missing/x', 'src/missing',
    'leak.txt', 'out', 'out/secret.txt', 'out/../ws/package.json', 'alias/deep/a.ts', 'alias/../package.json', 'dangling', 'loop', 'loop/x',
    'HEAD~1', 'HEAD:src/deep/a.ts', 'a\0b', join(ws, 'package.json'), join(ws, 'leak.txt'), '/etc/hostname', '.git',
  ];
  for (const p of paths) assert.equal(realPath(p), reference(ws, p), JSON.stringify(p));
  // The same answers when all are looked up in one decision (one scope: a folder seen once is not looked up again).
  const scope: RealPathScope = { folders: [], listings: [] };
  for (const p of paths) assert.equal(realPath(p, scope), reference(ws, p), `${JSON.stringify(p)} in one scope`);
  for (const p of [...paths].reverse()) assert.equal(realPath(p, scope), reference(ws, p), `${JSON.stringify(p)} in one scope, again`);
  // Its cheaper existence check (git's `.git`) answers realPath(p) !== null for each of them.
  assert.ok(realPath.exists);
  for (const p of paths) assert.equal(realPath.exists(p), realPath(p) !== null, `exists(${JSON.stringify(p)})`);
});

test('.git as a dangling link, a link to a directory, or missing: git\'s read-only commands ask unless it names something', () => {
  const git = (command: string) =>
    createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), workspaceRoot: ws, getParticipant: () => USER, realPath: workspaceRealPath(ws) })({
      toolName: 'shell', input: { command }, participantId: 'user', sessionId: 's', chain: ['user'],
    });
  const dotGit = join(ws, '.git');
  try {
    assert.match(git('git status').reason, /no \.git of its own/); // missing
    symlinkSync('missing-git-dir', dotGit);
    assert.match(git('git status').reason, /no \.git of its own/); // dangling
    rmSync(dotGit);
    symlinkSync(outside, dotGit);
    assert.equal(git('git status').decision, 'allow'); // a worktree's or submodule's .git may be elsewhere
    rmSync(dotGit);
    mkdirSync(dotGit);
    assert.equal(git('git status').decision, 'allow');
  } finally {
    rmSync(dotGit, { recursive: true, force: true });
  }
});

test('nothing is remembered between two calls: a file replaced by a symlink (and back) is seen at once', () => {
  const realPath = workspaceRealPath(ws);
  const file = join(ws, 'notes.txt');
  const dir = join(ws, 'docs');
  try {
    writeFileSync(file, 'notes\n');
    mkdirSync(dir);
    writeFileSync(join(dir, 'x.md'), '');
    assert.equal(realPath('notes.txt'), 'notes.txt');
    assert.equal(realPath('docs/x.md'), 'docs/x.md');
    rmSync(file);
    symlinkSync(join(outside, 'secret.txt'), file);
    rmSync(dir, { recursive: true });
    symlinkSync(outside, dir);
    assert.equal(realPath('notes.txt'), realpathSync(join(outside, 'secret.txt')));
    assert.equal(realPath('docs/x.md'), null);
    assert.equal(realPath('docs/secret.txt'), realpathSync(join(outside, 'secret.txt')));
    rmSync(file);
    writeFileSync(file, 'notes again\n');
    assert.equal(realPath('notes.txt'), 'notes.txt');
  } finally {
    rmSync(file, { force: true });
    rmSync(dir, { recursive: true, force: true });
  }
});

test('two decisions on the same command: a symlink swapped in between turns the allow into an ask', () => {
  const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), workspaceRoot: ws, getParticipant: () => USER, realPath: workspaceRealPath(ws) });
  const decide = (command: string) => authorize({ toolName: 'shell', input: { command }, participantId: 'user', sessionId: 's', chain: ['user'] });
  const file = join(ws, 'notes.txt');
  try {
    writeFileSync(file, 'notes\n');
    assert.equal(decide('cat notes.txt').decision, 'allow');
    assert.equal(decide('head -5 src/deep/a.ts').decision, 'allow');
    rmSync(file);
    symlinkSync(join(outside, 'secret.txt'), file);
    const swapped = decide('cat notes.txt');
    assert.equal(swapped.decision, 'ask', swapped.reason);
    assert.match(swapped.reason, /through a symbolic link from "notes.txt"/);
    rmSync(join(ws, 'src', 'deep'), { recursive: true });
    symlinkSync(outside, join(ws, 'src', 'deep'));
    assert.equal(decide('head -5 src/deep/secret.txt').decision, 'ask');
    rmSync(file);
    writeFileSync(file, 'notes\n');
    assert.equal(decide('cat notes.txt').decision, 'allow');
  } finally {
    rmSync(file, { force: true });
  }
});

test('within one decision each folder and each path is looked up once; the next decision looks them up again', () => {
  // A folder of its own (the test above leaves src/deep a link).
  mkdirSync(join(ws, 'lib', 'deep'), { recursive: true });
  writeFileSync(join(ws, 'lib', 'deep', 'a.ts'), '');
  const looked: string[] = [];
  // Without folder listings (next test): one lstat per component.
  const counting: RealPathSystem = { lstat: (path) => (looked.push(relative(realpathSync(ws), path)), lstatSync(path, { throwIfNoEntry: false })), listings: null };
  const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), workspaceRoot: ws, getParticipant: () => USER, realPath: workspaceRealPath(ws, counting) });
  const decide = (command: string) => authorize({ toolName: 'shell', input: { command }, participantId: 'user', sessionId: 's', chain: ['user'] });
  try {
    const line = 'cat lib/deep/a.ts lib/deep/a.ts package.json; head -1 lib/deep/a.ts; wc -l lib/deep/b.ts';
    const once = ['lib', 'lib/deep', 'lib/deep/a.ts', 'package.json', 'lib/deep/b.ts'].map((p) => p.split('/').join(sep));
    assert.equal(decide(line).decision, 'allow');
    assert.deepEqual(looked, once);
    looked.length = 0;
    assert.equal(decide(line).decision, 'allow');
    assert.deepEqual(looked, once, 'nothing of the filesystem is remembered between two decisions');
    // A link named last is looked up even under a folder seen already in the decision: it asks.
    symlinkSync(join(outside, 'secret.txt'), join(ws, 'lib', 'deep', 'leak.txt'));
    const asked = decide('cat lib/deep/a.ts lib/deep/leak.txt');
    assert.equal(asked.decision, 'ask', asked.reason);
    assert.match(asked.reason, /through a symbolic link from "lib\/deep\/leak.txt"/);
    // A folder swapped for a link between two decisions is seen by the second.
    rmSync(join(ws, 'lib', 'deep'), { recursive: true });
    symlinkSync(outside, join(ws, 'lib', 'deep'));
    const swapped = decide('cat package.json lib/deep/secret.txt');
    assert.equal(swapped.decision, 'ask', swapped.reason);
  } finally {
    rmSync(join(ws, 'lib'), { recursive: true, force: true });
  }
});

/** Waits until changes made before are older than RECENT_MS, so that the folders they touched may be listed. */
function settle(): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RECENT_MS + 50);
}

test('folder listings between decisions: an unchanged folder is looked up once per decision, its entries not; a file or folder swapped for a link in between is seen by the next decision', () => {
  mkdirSync(join(ws, 'lib', 'deep'), { recursive: true });
  writeFileSync(join(ws, 'lib', 'deep', 'a.ts'), '');
  writeFileSync(join(ws, 'notes.txt'), 'notes\n');
  const realRoot = realpathSync(ws);
  const looked: string[] = [];
  const counting: RealPathSystem = { lstat: (path) => (looked.push(relative(realRoot, path)), lstatSync(path, { throwIfNoEntry: false })) };
  const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), workspaceRoot: ws, getParticipant: () => USER, realPath: workspaceRealPath(ws, counting) });
  const decide = (command: string) => authorize({ toolName: 'shell', input: { command }, participantId: 'user', sessionId: 's', chain: ['user'] });
  const line = 'cat notes.txt package.json lib/deep/a.ts';
  try {
    settle();
    assert.equal(decide(line).decision, 'allow'); // the folders are seen
    assert.equal(decide(line).decision, 'allow'); // and found the same: listed
    looked.length = 0;
    assert.equal(decide(line).decision, 'allow');
    assert.deepEqual(looked, ['', 'lib', join('lib', 'deep')], 'the folders only, once each: their entries come from the listings');
    // A file swapped for a link to a secret: the root's ctime changed, its listing is not used.
    rmSync(join(ws, 'notes.txt'));
    symlinkSync(join(outside, 'secret.txt'), join(ws, 'notes.txt'));
    const swapped = decide(line);
    assert.equal(swapped.decision, 'ask', swapped.reason);
    assert.match(swapped.reason, /through a symbolic link from "notes.txt"/);
    // Its mtime set back (a process can: utimes) changes nothing: ctime is what is compared.
    const before = lstatSync(join(ws, 'lib'));
    settle();
    assert.equal(decide('cat lib/deep/a.ts').decision, 'allow');
    looked.length = 0;
    assert.equal(decide('cat lib/deep/a.ts').decision, 'allow');
    assert.deepEqual(looked, ['', 'lib', join('lib', 'deep')]);
    rmSync(join(ws, 'lib', 'deep'), { recursive: true });
    symlinkSync(outside, join(ws, 'lib', 'deep'));
    utimesSync(join(ws, 'lib'), before.atime, before.mtime);
    assert.equal(decide('cat lib/deep/secret.txt').decision, 'ask');
    assert.equal(decide('cat lib/deep/a.ts').decision, 'allow', 'nothing there: nothing to read (as without listings)');
    // .git from the root's listing: removed between two decisions, git asks at once.
    mkdirSync(join(ws, '.git'));
    settle();
    assert.equal(decide('git status').decision, 'allow');
    assert.equal(decide('git status').decision, 'allow');
    rmSync(join(ws, '.git'), { recursive: true });
    assert.match(decide('git status').reason, /no \.git of its own/);
    symlinkSync('missing-git-dir', join(ws, '.git'));
    settle();
    decide('git status');
    assert.match(decide('git status').reason, /no \.git of its own/, 'a dangling link listed as a link is followed');
  } finally {
    rmSync(join(ws, 'lib'), { recursive: true, force: true });
    rmSync(join(ws, 'notes.txt'), { force: true });
    rmSync(join(ws, '.git'), { recursive: true, force: true });
  }
});

test('with listings the answers are realpath\'s, for every shape of path, in and out of one decision', () => {
  settle();
  const realPath = workspaceRealPath(ws);
  const paths = [
    '.', '', './', 'package.json', './package.json', 'package.json/', 'package.json/.', 'package.json/x', 'src', 'src/', 'src//deep/a.ts',
    'src/deep/./a.ts', 'src/deep/a.ts/', 'src/deep/../deep/a.ts', 'src/..', '..', '../outside/secret.txt', 'missing', 'missing/x', 'src/missing',
    'leak.txt', 'out', 'out/secret.txt', 'out/../ws/package.json', 'alias/deep/a.ts', 'alias/../package.json', 'dangling', 'loop', 'loop/x',
    'HEAD~1', 'HEAD:src/deep/a.ts', 'a\0b', join(ws, 'package.json'), join(ws, 'leak.txt'), '/etc/hostname', '.git',
  ];
  for (let round = 0; round < 3; round++) {
    for (const p of paths) assert.equal(realPath(p), reference(ws, p), JSON.stringify(p));
    const scope: RealPathScope = { folders: [], listings: [] };
    for (const p of paths) assert.equal(realPath(p, scope), reference(ws, p), `${JSON.stringify(p)} in one scope`);
    if (round > 0) assert.ok(scope.listings.some((listing) => listing !== null), 'listings were used');
    for (const p of paths) assert.equal(realPath.exists!(p, scope), realPath(p) !== null, `exists(${JSON.stringify(p)})`);
  }
});

test('a name not in a current listing is looked up, not taken as missing (a case-folding folder resolves `Notes.txt` to its link `notes.txt`)', () => {
  const realRoot = realpathSync(ws);
  const folder = { dev: 1, ino: 2, ctimeMs: 1_000.5, isDirectory: () => true, isSymbolicLink: () => false };
  const link = { dev: 1, ino: 3, ctimeMs: 1_000.5, isDirectory: () => false, isSymbolicLink: () => true };
  // A case-folding folder: `notes.txt` is a link; `Notes.txt` names it too.
  const listings = new FolderListings({
    lstat: () => folder,
    list: () => new Map([['notes.txt', ENTRY_LINK]]),
    filesystem: () => 0xef53,
    now: () => 1_000_000,
  });
  const looked: string[] = [];
  const system: RealPathSystem = {
    lstat: (path) => (looked.push(relative(realRoot, path)), path === realRoot ? folder : path.toLowerCase() === join(realRoot, 'notes.txt') ? link : undefined),
    listings,
  };
  const realPath = workspaceRealPath(ws, system);
  for (let i = 0; i < 3; i++) realPath('Notes.txt', { folders: [], listings: [] }); // the root seen, then listed
  looked.length = 0;
  const scope: RealPathScope = { folders: [], listings: [] };
  realPath('Notes.txt', scope);
  assert.ok(scope.listings[0], 'the root is listed');
  assert.deepEqual(looked, ['', 'Notes.txt'], 'the name the listing lacks is looked up: lstat shows the link');
  looked.length = 0;
  realPath('notes.txt', scope);
  assert.deepEqual(looked, [], 'a listed name is not');
  assert.equal(realPath.exists!('Notes.txt', scope), existsSync(join(ws, 'Notes.txt')), 'exists looks it up too');
});
