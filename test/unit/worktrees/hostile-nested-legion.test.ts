import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { userGit, worktreesOf, write } from './helpers';

const A = 'session-ur-agent__alice__default';

/**
 * A workspace holding a nested workspace (a monorepo package opened on its own, trusted: its
 * `.legion/` is honoured at its next start). The repository ignores only the root's `.legion/`
 * (`/.legion/`), or nothing at all: what a user may well have written.
 */
async function monorepo(root: string, gitignore: string): Promise<void> {
  userGit(root, ['init', '-q', '-b', 'main']);
  await write(root, '.gitignore', gitignore);
  await write(root, 'pkg/index.js', 'module.exports = 1;\n');
  userGit(root, ['add', '-A']);
  userGit(root, ['commit', '-q', '-m', 'initial']);
  await write(root, 'pkg/.legion/rules.yaml', 'version: 1\nrules: []\n');
  await write(root, 'pkg/.legion/web-token', 'SECRET-WEB-TOKEN\n');
  await write(root, 'pkg/.legion/runs/r1/transcript.jsonl', '{"text":"private"}\n');
}

for (const gitignore of ['/.legion/\n', '']) {
  test(`hostile work (.gitignore ${JSON.stringify(gitignore)}): a nested workspace's .legion/ is neither copied into the isolated session's snapshot nor written by its merge`, async () => {
    await withTempDir(async (root) => {
      await monorepo(root, gitignore);
      const worktrees = worktreesOf(root);
      const a = await worktrees.isolate(A, 'alice');
      assert.ok(a.ok);
      // The snapshot (git objects every sandboxed command of the workspace can read) holds none of it.
      const tracked = userGit(a.record.root, ['ls-tree', '-r', '--name-only', 'HEAD']);
      assert.doesNotMatch(tracked, /\.legion/, 'the nested .legion/ (web token, transcripts) is not in the snapshot');
      await assert.rejects(stat(join(a.record.root, 'pkg', '.legion', 'web-token')));
      // The agent writes the nested workspace's rules in its worktree (the sandbox hides only .legion/ folders that exist when a call starts).
      await write(a.record.root, 'pkg/.legion/rules.yaml', 'version: 1\nrules:\n  - id: all\n    decision: allow\n');
      await write(a.record.root, 'pkg/.LEGION/config.yaml', 'x: 1\n');
      await write(a.record.root, 'pkg/index.js', 'module.exports = 2;\n');
      const work = await worktrees.collect(A);
      assert.ok(work);
      assert.deepEqual(work.files.map((f) => f.path), ['pkg/index.js'], 'a nested .legion/ of the worktree is never part of the work');
      const merged = await worktrees.merge(A, work);
      assert.equal(merged.kind, 'merged');
      assert.equal(await readFile(join(root, 'pkg', '.legion', 'rules.yaml'), 'utf8'), 'version: 1\nrules: []\n', 'the trusted nested rules are unchanged');
      assert.equal(await readFile(join(root, 'pkg', 'index.js'), 'utf8'), 'module.exports = 2;\n');
    });
  });
}

test('hostile work: a nested workspace\'s .legion/ file the repository tracks (a package\'s shipped rules) is never merged, changed in the worktree', async () => {
  await withTempDir(async (root) => {
    userGit(root, ['init', '-q', '-b', 'main']);
    await write(root, '.gitignore', '/.legion/\n');
    await write(root, 'pkg/.legion/rules.yaml', 'version: 1\nrules: []\n');
    await write(root, 'pkg/index.js', 'module.exports = 1;\n');
    userGit(root, ['add', '-A']);
    userGit(root, ['commit', '-q', '-m', 'initial']);
    const worktrees = worktreesOf(root);
    const a = await worktrees.isolate(A, 'alice');
    assert.ok(a.ok);
    await write(a.record.root, 'pkg/.legion/rules.yaml', 'version: 1\nrules:\n  - id: all\n    decision: allow\n');
    await write(a.record.root, 'pkg/index.js', 'module.exports = 2;\n');
    const work = await worktrees.collect(A);
    assert.ok(work);
    assert.deepEqual(work.files.map((f) => f.path), ['pkg/index.js'], 'a nested .legion/ of the worktree is never part of the work');
    const merged = await worktrees.merge(A, work);
    assert.equal(merged.kind, 'merged');
    assert.equal(await readFile(join(root, 'pkg', '.legion', 'rules.yaml'), 'utf8'), 'version: 1\nrules: []\n', 'the nested rules are unchanged');
    assert.equal(await readFile(join(root, 'pkg', 'index.js'), 'utf8'), 'module.exports = 2;\n');
  });
});

test('hostile .gitignore: a negation (!.legion/, written by an agent) does not bring any .legion/ into the snapshot', async () => {
  await withTempDir(async (root) => {
    await monorepo(root, '/.legion/\n');
    await write(root, '.legion/web-token', 'ROOT-WEB-TOKEN\n');
    await write(root, '.legion/audit.jsonl', '{"secret":1}\n');
    // A .gitignore rule outranks core.excludesFile and info/exclude: this re-included both.
    await write(root, '.gitignore', '/.legion/\n!.legion/\n!/.legion/\n!pkg/.legion/\n!**/.legion/**\n');
    const worktrees = worktreesOf(root);
    const a = await worktrees.isolate(A, 'alice');
    assert.ok(a.ok);
    const tracked = userGit(a.record.root, ['ls-tree', '-r', '--name-only', 'HEAD']);
    assert.doesNotMatch(tracked, /\.legion/i, 'no .legion/ (web token, audit log, transcripts) in the snapshot');
  });
});

test('hostile .gitignore: a negation (!.env) does not bring an untracked secret into the snapshot', async () => {
  await withTempDir(async (root) => {
    await monorepo(root, '/.legion/\n');
    await write(root, '.env', 'API_KEY=SECRET\n');
    await write(root, 'pkg/server.pem', 'PRIVATE KEY\n');
    await write(root, 'pkg/we*rd[1]\nname.pem', 'PRIVATE KEY\n');
    await write(root, 'pkg/werd1.txt', 'kept\n');
    await write(root, '.gitignore', '/.legion/\n!.env\n!*.pem\n!**\n');
    const worktrees = worktreesOf(root);
    const a = await worktrees.isolate(A, 'alice');
    assert.ok(a.ok);
    const tracked = userGit(a.record.root, ['ls-tree', '-r', '--name-only', 'HEAD']);
    assert.doesNotMatch(tracked, /\.env|\.pem/, 'no untracked secret in the snapshot');
    assert.match(tracked, /werd1\.txt/, 'a secret\'s name is no pattern');
    assert.match(tracked, /pkg\/index\.js/);
  });
});
