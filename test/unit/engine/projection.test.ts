import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resetProjection } from '../../../src/engine/projection';
import { withTempDir } from '../../helpers/tmp';

test('the projection is cut back to its size at the start of the invocation on a replay, never for a new invocation', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'session.jsonl');
    const base = join(dir, 'projection', 'session.base.json');
    writeFileSync(file, 'turn 1\n');
    resetProjection(file, base, 'inv_a');
    appendFileSync(file, 'turn 2, cut when its worker died\n');
    // The replay of inv_a: what the dead attempt appended is dropped.
    resetProjection(file, base, 'inv_a');
    assert.equal(readFileSync(file, 'utf8'), 'turn 1\n');
    appendFileSync(file, 'turn 2\n');
    // The next turn (a new invocation) starts from the file as it is.
    resetProjection(file, base, 'inv_b');
    assert.equal(readFileSync(file, 'utf8'), 'turn 1\nturn 2\n');
    assert.deepEqual(JSON.parse(readFileSync(base, 'utf8')), { invocationId: 'inv_b', size: 14 });
  });
});

test('a session file not created yet has the base 0: a replay removes what the dead attempt wrote', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'session.jsonl');
    const base = join(dir, 'projection', 'session.base.json');
    resetProjection(file, base, 'inv_a');
    writeFileSync(file, 'half a turn\n');
    resetProjection(file, base, 'inv_a');
    assert.equal(readFileSync(file, 'utf8'), '');
  });
});

test('a base record is overwritten whole by a shorter one, and one cut mid-write reads as none: the replay records the file as it finds it', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'session.jsonl');
    const base = join(dir, 'projection', 'session.base.json');
    writeFileSync(file, 'turn 1\n');
    resetProjection(file, base, `inv_${'long'.repeat(20)}`);
    appendFileSync(file, 'turn 2\n');
    resetProjection(file, base, 'inv_b');
    assert.deepEqual(JSON.parse(readFileSync(base, 'utf8')), { invocationId: 'inv_b', size: 14 });
    appendFileSync(file, 'turn 3, cut\n');
    resetProjection(file, base, 'inv_b');
    assert.equal(readFileSync(file, 'utf8'), 'turn 1\nturn 2\n', 'the replay of inv_b cut back to its base');
    // A worker killed while writing the next record: half of it on disk.
    writeFileSync(base, '{"invocationId":"inv_c","si');
    resetProjection(file, base, 'inv_c');
    assert.equal(readFileSync(file, 'utf8'), 'turn 1\nturn 2\n');
    assert.deepEqual(JSON.parse(readFileSync(base, 'utf8')), { invocationId: 'inv_c', size: 14 });
  });
});
