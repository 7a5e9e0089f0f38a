import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { makeRepo, userRepoState, worktreesOf } from './helpers';

const CHILD = join(import.meta.dirname, '..', '..', 'helpers', 'merge-kill-child.ts');
const files = async (root: string): Promise<string[]> => (await readdir(root)).filter((n) => /^f\d+\.txt$/.test(n)).sort();

test('kill -9 in the middle of a merge: the workspace ends before or after the merge, never half (the journal is finished at the next start)', async () => {
  await withTempDir(async (root) => {
    await makeRepo(root);
    const before = userRepoState(root);
    const child = spawnSync(process.execPath, ['--import', 'tsx', CHILD, root, '10', '4'], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(child.signal, 'SIGKILL', child.stderr);
    assert.match(child.stdout, /merging/);
    assert.doesNotMatch(child.stdout, /merged/);
    // Half applied on disk right now: the hook killed the process after 4 of 10 files.
    assert.equal((await files(root)).length, 4);
    const worktrees = worktreesOf(root);
    assert.deepEqual((await worktrees.list()).map((r) => r.state), ['waiting']);
    assert.deepEqual(await worktrees.recover(), ['session-ur-agent__alice__default']);
    assert.equal((await files(root)).length, 10, 'after: every file of the merge');
    for (const name of await files(root)) assert.match(await readFile(join(root, name), 'utf8'), /by alice/);
    assert.deepEqual((await worktrees.list()).map((r) => r.state), ['merged']);
    assert.deepEqual(await worktrees.recover(), [], 'a finished journal is gone');
    assert.equal(userRepoState(root).head, before.head, 'nothing committed on the user branch');
  });
});
