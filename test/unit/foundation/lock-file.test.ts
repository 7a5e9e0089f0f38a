import { test } from 'node:test';
import assert from 'node:assert/strict';
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
