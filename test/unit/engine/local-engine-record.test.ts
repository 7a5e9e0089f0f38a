import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { engineUrls, OLD_LOCAL_ENGINE } from '../../../src/cli/engine-settings';
import { writeLocalEngine } from '../../../src/engine/local-record';
import { unixSocketUrl } from '../../../src/engine/http-text';
import { TRUSTED } from '../../../src/storage/workspace-trust';
import { LegionError } from '../../../src/errors';
import { withTempDir } from '../../helpers/tmp';

const KEY = 'publickeyv1_5BYGELEnryj4UE99cU1PR7WdQ6G5EMsbbikyEHmvi3uN';
const base = { serverPid: 1234, workerPid: 1235, worker: 'http://127.0.0.1:9080', startedAt: '2026-11-28T06:00:00Z' };

test('the local engine: its sockets and its key from its record; a record of an older Legion (TCP, no key) is refused, saying to restart it', async () => {
  await withTempDir(async (dir) => {
    const legionDir = join(dir, '.legion');
    const sockets = { ingress: unixSocketUrl(join(legionDir, 'engine', 'data', 'legion', 'ingress.sock')), admin: unixSocketUrl(join(legionDir, 'engine', 'data', 'legion', 'admin.sock')) };
    writeLocalEngine(legionDir, { ...base, ...sockets, identityKey: KEY });
    assert.deepEqual(engineUrls({ kind: 'restate' }, legionDir, TRUSTED), { ...sockets, identityKeys: [KEY] });
    for (const old of [{ ...base, ingress: 'http://127.0.0.1:8080', admin: 'http://127.0.0.1:9070' }, { ...base, ...sockets }, { ...base, ingress: 'http://127.0.0.1:8080', admin: 'http://127.0.0.1:9070', identityKey: KEY }]) {
      writeLocalEngine(legionDir, old);
      assert.throws(() => engineUrls({ kind: 'restate' }, legionDir, TRUSTED), (error: unknown) => error instanceof LegionError && error.message === OLD_LOCAL_ENGINE);
    }
  });
});
