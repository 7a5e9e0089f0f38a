import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import { explainBlocked } from '../../../../src/tools/sandbox/blocked';
import { seccompFilter } from '../../../../src/tools/sandbox/seccomp';
import { createSecretFinder } from '../../../../src/tools/sandbox/secrets';
import { bwrapArgs } from '../../../../src/tools/sandbox/policy';
import { isPlainConfig } from '../../../../src/tools/sandbox/git-guard';
import { secretPathPatterns } from '../../../../src/authz/rules/secret-paths';
import { loadRuleFiles } from '../../../../src/authz/rules/load';
import { DEFAULT_SECRET_PATTERNS } from '../../../../src/tools/sandbox/secret-patterns';
import { withTempDir } from '../../../helpers/tmp';

test('blocked: the sandbox\'s errors get a line saying so; others none', () => {
  const none = { network: 'none' as const, maxProcesses: 64 };
  assert.match(explainBlocked('touch: cannot touch \'/etc/x\': Read-only file system', none) ?? '', /^blocked by the sandbox: write outside the workspace/);
  assert.match(explainBlocked('curl: (6) Could not resolve host: example.com', none) ?? '', /^blocked by the sandbox: no network/);
  assert.equal(explainBlocked('curl: (6) Could not resolve host: example.com', { network: 'all' }), undefined);
  assert.match(explainBlocked('bash: fork: retry: Resource temporarily unavailable', none) ?? '', /at most 64 processes/);
  assert.match(explainBlocked('kill: (123) - No such process', none) ?? '', /invisible/);
  assert.match(explainBlocked('cat: /home/u/.ssh/id_rsa: Permission denied', none) ?? '', /^possibly blocked by the sandbox: secret paths/);
  assert.equal(explainBlocked('npm ERR! Test failed.  See above for more details.', none), undefined);
});

test('seccomp: one 8-byte instruction per entry for known CPUs, none for others', () => {
  const x64 = seccompFilter('x64')!;
  assert.equal(x64.length % 8, 0);
  assert.equal(x64.readUInt32LE(4 + 8), 0xc000003e, 'checks the x86-64 audit arch');
  assert.equal(seccompFilter('arm64')!.readUInt32LE(4 + 8), 0xc00000b7);
  assert.equal(seccompFilter('mips'), undefined);
});

test('policy: read-only root, private /tmp, writable workspace, protected paths, then hidden secrets', () => {
  const args = bwrapArgs({
    workspaceRoot: '/w', readOnly: ['/w/.legion'], hiddenDirs: ['/h/.ssh', '/tmp/gone'], hiddenFiles: ['/w/.env'],
    emptyDir: '/p/d', emptyFile: '/p/f', network: 'none', disableUserns: true, seccompFd: 3,
  });
  const text = args.join(' ');
  assert.ok(text.startsWith('--ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --bind /w /w --ro-bind /w/.legion /w/.legion --ro-bind /p/d /h/.ssh --ro-bind /p/f /w/.env'), text);
  assert.doesNotMatch(text, /\/tmp\/gone/, 'a path under the host /tmp is hidden by the private /tmp already');
  assert.doesNotMatch(text, /--share-net/);
  assert.match(text, /--unshare-all --unshare-user --disable-userns --cap-drop ALL --die-with-parent --new-session .* --seccomp 3 --$/);
  const pinned = bwrapArgs({
    workspaceRoot: '/w', pinned: ['/w/.git'], readOnly: ['/w/.git/config'], hiddenDirs: [], hiddenFiles: [],
    emptyDir: '/p/d', emptyFile: '/p/f', network: 'none', disableUserns: false,
  }).join(' ');
  assert.match(pinned, /--bind \/w \/w --bind \/w\/\.git \/w\/\.git --ro-bind \/w\/\.git\/config \/w\/\.git\/config/, 'the git directory is pinned before its surfaces go read-only');
  const nested = bwrapArgs({
    workspaceRoot: '/h/w', readOnly: [], hiddenDirs: ['/h/.ssh', '/h/.ssh', '/h'], hiddenFiles: ['/h/.ssh/id_rsa', '/h/.pgpass'],
    emptyDir: '/p/d', emptyFile: '/p/f', network: 'none', disableUserns: false,
  }).join(' ');
  assert.match(nested, /--ro-bind \/p\/d \/h\/\.ssh --ro-bind \/p\/f \/h\/\.pgpass --unshare-all/, 'once each; nothing inside a hidden directory');
  assert.doesNotMatch(nested, /\/p\/d \/h /, 'a directory holding the workspace is not hidden');
  const open = bwrapArgs({ workspaceRoot: '/w', readOnly: [], hiddenDirs: [], hiddenFiles: [], emptyDir: '/p/d', emptyFile: '/p/f', network: 'all', disableUserns: false });
  assert.match(open.join(' '), /--unshare-all --unshare-user --share-net --cap-drop/);
});

test('secret paths: the shipped rules give the patterns; the scan finds them in the workspace, HOME and next to the workspace', async () => {
  const rules = await loadRuleFiles([resolve('config/rules.yaml')]);
  assert.ok(rules.ok);
  const patterns = secretPathPatterns(rules.ruleSet);
  assert.ok(patterns.includes('**/.env') && patterns.includes('**/.ssh/**'), patterns.join(' '));
  assert.deepEqual([...patterns].sort(), [...DEFAULT_SECRET_PATTERNS].sort(), 'the fallback list mirrors the shipped rule');
  await withTempDir(async (dir) => {
    const ws = join(dir, 'ws');
    const home = join(dir, 'home');
    await mkdir(join(ws, 'src', 'node_modules', 'pkg'), { recursive: true });
    await mkdir(join(home, 'p', '.aws'), { recursive: true });
    await writeFile(join(ws, 'src', 'server.pem'), 'k');
    await writeFile(join(ws, 'src', 'node_modules', 'pkg', '.env'), 'skipped tree');
    await writeFile(join(ws, 'src', 'main.ts'), 'code');
    await writeFile(join(dir, '.env'), 'next to the workspace');
    await writeFile(join(home, 'p', '.aws', 'credentials'), 'k');
    const finder = createSecretFinder(patterns);
    const found = finder.find({ workspaceRoot: ws, home });
    // Every ancestor's own entries are scanned too; those above `dir` are the machine's (another
    // program's /tmp/key.pem), so only what this test made is compared.
    const ours = (files: readonly string[]) => files.filter((file) => file.startsWith(dir + sep)).sort();
    assert.deepEqual(ours(found.files), [join(dir, '.env'), join(ws, 'src', 'server.pem')].sort());
    assert.deepEqual(found.dirs, [join(home, 'p', '.aws')]);
    // A secret that appears later is found on the next call (its directory changed).
    await writeFile(join(ws, 'src', '.env.local'), 'new');
    assert.ok(finder.find({ workspaceRoot: ws, home }).files.includes(join(ws, 'src', '.env.local')));
    await mkdir(join(ws, 'src', 'deep', 'er'), { recursive: true });
    await writeFile(join(ws, 'src', 'deep', 'er', 'id_ed25519'), 'k');
    assert.ok(finder.find({ workspaceRoot: ws, home }).files.includes(join(ws, 'src', 'deep', 'er', 'id_ed25519')));
  });
});

test('git guard: a new repository keeps the config git init and git clone write, nothing git runs', () => {
  const cloned = '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n[remote "origin"]\n\turl = https://github.com/o/r.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch "main"]\n\tremote = origin\n\tmerge = refs/heads/main\n';
  assert.equal(isPlainConfig(cloned), true);
  assert.equal(isPlainConfig('[core]\n\tbare = false\n\tfsmonitor = "touch x"\n'), false);
  assert.equal(isPlainConfig('[core]\n\thooksPath = .h\n'), false);
  assert.equal(isPlainConfig('[alias]\n\tst = !sh\n'), false);
  assert.equal(isPlainConfig('[include]\n\tpath = ../x\n'), false);
  assert.equal(isPlainConfig('[remote "o"]\n\turl = ext::sh -c touch% /tmp/x\n'), false);
  assert.equal(isPlainConfig('[submodule "s"]\n\tupdate = !sh\n'), false);
  assert.equal(isPlainConfig('bare = false\n'), false, 'a key outside any section');
});
