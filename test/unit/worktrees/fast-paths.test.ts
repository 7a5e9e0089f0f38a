import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { withTempDir } from '../../helpers/tmp';
import { INDEX_WARM_DELAY_MS } from '../../../src/worktrees/service';
import { inWorkspace, parseRawNumstat } from '../../../src/worktrees/merge';
import { makeRepo, userGit, write, worktreesOf } from './helpers';

/** The faster paths of isolation (docs/worktrees.md#performance) keep its semantics. */

const indexOf = (root: string, sessionId: string): string => {
  const gitFile = readFileSync(join(root, '.legion/worktrees', sessionId, '.git'), 'utf8');
  return join(/^gitdir: (.+)$/m.exec(gitFile)![1]!.trim(), 'index');
};

test('a workspace without any commit yet can be isolated (the snapshot has no parent) and merged back', async () => {
  await withTempDir(async (root) => {
    userGit(root, ['init', '-q', '-b', 'main']);
    await write(root, '.gitignore', '.legion/\n');
    await write(root, 'draft.txt', 'not committed\n');
    const worktrees = worktreesOf(root);
    const isolated = await worktrees.isolate('session-ur-agent__alice__default', 'alice');
    assert.ok(isolated.ok, isolated.ok ? '' : isolated.error);
    assert.equal(readFileSync(join(isolated.record.root, 'draft.txt'), 'utf8'), 'not committed\n');
    writeFileSync(join(isolated.record.root, 'new.txt'), 'by alice\n');
    const raised = await worktrees.collectChecked('session-ur-agent__alice__default');
    assert.ok(raised);
    assert.deepEqual(raised.work.files.map((f) => `${f.status} ${f.path}`), ['added new.txt']);
    assert.equal(raised.check.kind, 'clean');
    assert.deepEqual(await worktrees.merge('session-ur-agent__alice__default', raised.work), { kind: 'merged' });
    assert.equal(readFileSync(join(root, 'new.txt'), 'utf8'), 'by alice\n');
    assert.throws(() => userGit(root, ['rev-parse', '--verify', '-q', 'HEAD']), 'still no commit on the user branch');
    await worktrees.stop();
  });
});

test("after a checkout the worktree's index is refreshed in the background once its second has passed; a same-size change made meanwhile is still collected", async () => {
  await withTempDir(async (root) => {
    await makeRepo(root);
    const worktrees = worktreesOf(root);
    const sessionId = 'session-ur-agent__alice__default';
    const isolated = await worktrees.isolate(sessionId, 'alice');
    assert.ok(isolated.ok);
    const index = indexOf(root, sessionId);
    const checkedOut = statSync(index).mtimeMs;
    // Changed at once, same size as before: the kind of change only git's "racily clean" check catches.
    writeFileSync(join(isolated.record.root, 'shared.txt'), 'one\nTWO\nthree\n');
    let refreshed = checkedOut;
    for (const deadline = Date.now() + INDEX_WARM_DELAY_MS + 20_000; refreshed === checkedOut && Date.now() < deadline;) {
      await sleep(100);
      refreshed = statSync(index).mtimeMs;
    }
    assert.ok(Math.floor(refreshed / 1000) > Math.floor(checkedOut / 1000), 'the index was written again in a later second');
    const raised = await worktrees.collectChecked(sessionId);
    assert.ok(raised, 'the change was collected');
    assert.deepEqual(raised.work.files.map((f) => `${f.status} ${f.path} +${f.added} -${f.removed}`), ['modified shared.txt +1 -1']);
    assert.match(raised.work.diff, /^\+TWO$/m);
    await worktrees.stop();
  });
});

test('collect cancels a warm-up not yet started; stop() leaves no git process behind', async () => {
  await withTempDir(async (root) => {
    await makeRepo(root);
    const worktrees = worktreesOf(root);
    const sessionId = 'session-ur-agent__alice__default';
    const isolated = await worktrees.isolate(sessionId, 'alice');
    assert.ok(isolated.ok);
    writeFileSync(join(isolated.record.root, 'alice.txt'), 'alice\n');
    const raised = await worktrees.collectChecked(sessionId);
    assert.deepEqual(raised?.work.files.map((f) => f.path), ['alice.txt']);
    const index = indexOf(root, sessionId);
    const collected = statSync(index).mtimeMs;
    await sleep(INDEX_WARM_DELAY_MS + 500);
    assert.equal(statSync(index).mtimeMs, collected, 'no refresh ran after the collect');
    await worktrees.stop();
  });
});

test('diff-tree --raw --numstat output: changes with their line counts, binary files without', () => {
  const out = Buffer.from([
    ':100644 100644 aaaa bbbb M', 'a b.txt',
    ':000000 100755 0000 cccc A', ':odd name',
    ':100644 000000 dddd 0000 D', 'gone.bin',
    '2\t1\ta b.txt', '5\t0\t:odd name', '-\t-\tgone.bin', '',
  ].join('\0'));
  const { changes, stats } = parseRawNumstat(out);
  assert.deepEqual(changes.map((c) => `${c.status} ${c.path} ${c.newMode}`), ['M a b.txt 100644', 'A :odd name 100755', 'D gone.bin 000000']);
  assert.deepEqual([...stats], [['a b.txt', { added: 2, removed: 1 }], [':odd name', { added: 5, removed: 0 }], ['gone.bin', null]]);
});

test('a merge never reaches .legion/ or a .git folder, whatever their case (case-insensitive file systems)', () => {
  assert.equal(inWorkspace('src/a.ts', ''), 'src/a.ts');
  assert.equal(inWorkspace('sub/src/a.ts', 'sub/'), 'src/a.ts');
  for (const path of ['.legion/collective/participants/x.json', '.LEGION/collective/participants/x.json', '.Legion/rules.yaml', 'a/.GIT/config', 'a/../b']) {
    assert.equal(inWorkspace(path, ''), null, path);
  }
  assert.equal(inWorkspace('sub/.LeGiOn/x', 'sub/'), null);
  assert.equal(inWorkspace('other/a.ts', 'sub/'), null);
});
