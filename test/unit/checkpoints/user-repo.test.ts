import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, readFile, readdir, writeFile, access, mkdir } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { applyUndo, pickCheckpoint, planUndoTo } from '../../../src/checkpoints/undo';
import { pruneCheckpoints } from '../../../src/checkpoints/prune';
import { openStore, put, subject, userGit } from './helpers';

const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/** Everything of the user's repository that a checkpoint must never change. */
async function repoFingerprint(root: string): Promise<Record<string, string>> {
  const git = join(root, '.git');
  const hooks = (await readdir(join(git, 'hooks'))).sort().join(',');
  return {
    head: await readFile(join(git, 'HEAD'), 'utf8'),
    index: sha(await readFile(join(git, 'index'))),
    config: sha(await readFile(join(git, 'config'))),
    hooks,
    refs: userGit(root, ['for-each-ref', '--format=%(refname) %(objectname)']),
    stash: userGit(root, ['stash', 'list']),
  };
}

test("the user's git repository is never touched: HEAD, index, refs, config, hooks, stash; no hook or fsmonitor runs", () =>
  withTempDir(async (root) => {
    userGit(root, ['init', '-q', '-b', 'main']);
    await put(root, 'tracked.txt', 'v1\n');
    await put(root, '.gitignore', 'secret.env\n');
    userGit(root, ['add', '.']);
    userGit(root, ['commit', '-qm', 'one']);
    await writeFile(join(root, 'tracked.txt'), 'stashed\n');
    userGit(root, ['stash', '-q']);
    await put(root, 'staged.txt', 'staged\n');
    userGit(root, ['add', 'staged.txt']);
    await put(root, 'secret.env', 'KEY=1\n');
    // Hooks and an fsmonitor command that would leave a mark if anything ran them.
    const mark = join(root, '.legion', 'PWNED');
    await put(root, '.legion/legion.json', '{}\n'); // a Legion workspace, as `legion init` leaves it
    for (const hook of ['pre-commit', 'post-checkout', 'post-index-change', 'pre-auto-gc', 'reference-transaction']) {
      await writeFile(join(root, '.git', 'hooks', hook), `#!/bin/sh\necho ${hook} >> "${mark}"\n`);
      await chmod(join(root, '.git', 'hooks', hook), 0o755);
    }
    userGit(root, ['config', 'core.fsmonitor', `echo fsmonitor >> "${mark}"; false`]);
    // The test's own status runs no hook (post-index-change) and no fsmonitor either.
    const status = (): string => userGit(root, ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', 'status', '--porcelain=v2', '--branch']);
    const statusBefore = status();
    const before = await repoFingerprint(root);
    const store = await openStore(root);
    const open = await store.begin(subject());
    await writeFile(join(root, 'tracked.txt'), 'agent\n');
    await put(root, 'agent-new.txt', 'new\n');
    await open.finish();
    const target = pickCheckpoint(await store.list(), {});
    assert.ok(typeof target !== 'string');
    const outcome = await applyUndo(store, await planUndoTo(store, target), { runId: 'run-1', includeConflicts: false });
    assert.ok(outcome.ok, JSON.stringify(outcome));
    await pruneCheckpoints(store, { keepDays: 0, maxRepoBytes: 1 }, new Date(Date.now() + 86_400_000));
    store.close();
    assert.deepEqual(await repoFingerprint(root), before);
    await assert.rejects(access(mark), 'no hook or fsmonitor command ran');
    assert.equal(status(), statusBefore);
    // The shadow repository never saw the ignored secret.
    const { gitText } = await import('../../../src/checkpoints/git');
    assert.doesNotMatch(await gitText(store.paths.place, ['ls-tree', '-r', '--name-only', target.tree]), /secret\.env|\.git\//);
  }));
