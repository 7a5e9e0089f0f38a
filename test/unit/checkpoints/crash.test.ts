import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFile, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { withTempDir } from '../../helpers/tmp';
import { applyUndo, pickCheckpoint, planUndoTo } from '../../../src/checkpoints/undo';
import { openStore, put, subject } from './helpers';

const CHILD = `
import { openCheckpointStore } from ${JSON.stringify(new URL('../../../src/checkpoints/store.ts', import.meta.url).pathname)};
import { writeFileSync } from 'node:fs';
const root = process.argv[2];
const store = await openCheckpointStore({ workspaceRoot: root, maxFileBytes: 1e6 });
for (let i = 0; ; i++) {
  const open = await store.begin({ runId: 'r', sessionId: 's', participantId: 'p', toolUseIds: [], toolNames: ['shell'], turn: i });
  for (let f = 0; f < 50; f++) writeFileSync(root + '/dir' + (f % 5) + '/f' + f + '.txt', 'round ' + i);
  await open.finish();
  console.log('snap ' + i);
}
`;

test('SIGKILL during snapshots leaves the shadow repository usable', { timeout: 120_000 }, () =>
  withTempDir(async (root) => {
    for (let f = 0; f < 50; f++) await put(root, `dir${f % 5}/f${f}.txt`, 'start');
    const script = join(root, '..', `crash-child-${process.pid}-${Date.now()}.mts`);
    await writeFile(script, CHILD);
    const child = spawn(process.execPath, ['--import', 'tsx', script, root], { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
    // Kill the whole group (node and its running git) in the middle of the third round.
    await new Promise<void>((resolve) => {
      const lines = createInterface({ input: child.stdout! });
      lines.on('line', (line) => {
        if (line === 'snap 2') setTimeout(() => { process.kill(-child.pid!, 'SIGKILL'); resolve(); }, 5);
      });
      child.on('exit', () => resolve());
    });
    await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(undefined) : child.on('exit', resolve)));
    // Whatever the kill interrupted, make the worst case certain: git's index lock and ours, left by a dead process.
    const gitDir = join(root, '.legion', 'checkpoints', 'git');
    await writeFile(join(gitDir, 'index.lock'), 'torn');
    await writeFile(join(root, '.legion', 'checkpoints', 'lock'), '999999999');
    await writeFile(join(root, '.legion', 'checkpoints', 'checkpoints.jsonl'), '{"v":1,"kind":"bef', { flag: 'a' });

    const store = await openStore(root);
    const open = await store.begin(subject());
    await writeFile(join(root, 'dir0/f0.txt'), 'after the crash');
    await open.finish();
    const target = pickCheckpoint(await store.list(), {});
    assert.ok(typeof target !== 'string');
    assert.equal(target.id, open.id);
    const outcome = await applyUndo(store, await planUndoTo(store, target), { runId: 'r', includeConflicts: false });
    assert.ok(outcome.ok, JSON.stringify(outcome));
    assert.notEqual(await readFile(join(root, 'dir0/f0.txt'), 'utf8'), 'after the crash');
    const { runGit } = await import('../../../src/checkpoints/git');
    const fsck = await runGit(store.paths.place, ['fsck', '--no-dangling']);
    assert.ok(fsck.ok, fsck.ok ? '' : fsck.stderr);
    store.close();
  }));
