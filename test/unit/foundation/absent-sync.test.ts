import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { readLockFile } from '../../../src/storage/lock-file';
import { dropTornTail } from '../../../src/storage/jsonl';
import { callsInFlight } from '../../../src/storage/sandbox-calls';

// A server's lock, a new run's ledger and the sandbox's call records are looked for at every
// start and are mostly missing: asked about with a stat that throws nothing (surelyAbsent,
// src/storage/absent.ts; test/e2e/start-missing-files.test.ts counts the throws of a start).
// What a path that fails otherwise answers is unchanged.
test('a server lock, a ledger, the call records: missing is nothing; a path that fails otherwise still throws', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'file'), 'x');
    assert.equal(readLockFile(join(dir, 'serve.json')), undefined);
    assert.equal(dropTornTail(join(dir, 'events.jsonl')), null);
    assert.deepEqual(callsInFlight(join(dir, 'trusted-workspaces.json')), []);
    assert.throws(() => readLockFile(join(dir, 'file', 'serve.json')), { code: 'ENOTDIR' });
    assert.throws(() => dropTornTail(join(dir, 'file', 'events.jsonl')), { code: 'ENOTDIR' });
    await writeFile(join(dir, 'serve.json'), '{"pid":1}');
    assert.equal(readLockFile(join(dir, 'serve.json')), '{"pid":1}');
  });
});
