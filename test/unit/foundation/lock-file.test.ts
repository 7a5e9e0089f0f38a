import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLockFile, readLockFile, removeLockIfUnchanged } from '../../../src/storage/lock-file';
import { withTempDir } from '../../helpers/tmp';

test('lock file: created once, private, whole on appearance, with no staging file left behind', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'lock');
    assert.equal(createLockFile(file, 'first\n'), true);
    assert.equal(createLockFile(file, 'second\n'), false, 'exclusive');
    assert.equal(readFileSync(file, 'utf8'), 'first\n');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(dir), ['lock']);
    assert.throws(() => createLockFile(join(dir, 'missing', 'lock'), 'x'), /ENOENT/);
  });
});

test('lock file: removal judged on old content leaves a lock another process put there meanwhile (the stale-unlink race)', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'lock');
    createLockFile(file, 'dead holder\n');
    const judged = readLockFile(file) ?? '';
    // Between the judgement and the removal another taker removed the stale lock and took it.
    assert.equal(removeLockIfUnchanged(file, judged), 'removed');
    assert.equal(createLockFile(file, 'live holder\n'), true);
    assert.equal(removeLockIfUnchanged(file, judged), 'changed');
    assert.equal(readLockFile(file), 'live holder\n', 'the live holder keeps its lock');
    assert.deepEqual(readdirSync(dir), ['lock'], 'nothing left aside');
    assert.equal(removeLockIfUnchanged(join(dir, 'none'), judged), 'missing');
    writeFileSync(file, 'x');
    assert.equal(removeLockIfUnchanged(file, 'x'), 'removed');
    assert.equal(readLockFile(file), undefined);
  });
});

test('lock file: a remover that judged other content never moves a live lock (a third taker would create its own while it was away)', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'lock');
    assert.equal(createLockFile(file, 'live holder\n'), true);
    const before = statSync(file, { bigint: true });
    assert.equal(removeLockIfUnchanged(file, 'dead holder\n'), 'changed');
    const after = statSync(file, { bigint: true });
    // A rename aside and a link back would keep the inode but change its ctime (and drop the file for that moment).
    assert.deepEqual([after.ino, after.ctimeNs], [before.ino, before.ctimeNs], 'the live lock was not touched');
    assert.equal(readLockFile(file), 'live holder\n');
  });
});

test('lock file: removers take turns through a breaker; a live one is waited for, a dead one is broken', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'lock');
    assert.equal(createLockFile(file, 'stale\n'), true);
    // Another remover (this live process) holds the breaker: nothing is removed, after a bounded wait.
    writeFileSync(`${file}.break`, `${process.pid} other\n`);
    const started = Date.now();
    assert.equal(removeLockIfUnchanged(file, 'stale\n'), 'changed');
    assert.ok(Date.now() - started >= 1_500, 'it waited for the other remover');
    assert.equal(readLockFile(file), 'stale\n');
    // A remover killed while holding it: its breaker is broken, the removal goes on.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(`${file}.break`, `${dead.stdout} killed\n`);
    assert.equal(removeLockIfUnchanged(file, 'stale\n'), 'removed');
    assert.deepEqual(readdirSync(dir), [], 'no lock, no breaker, nothing aside');
  });
});
