import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { loadOrCreateWebToken, tokenMatches, webTokenFile } from '../../../src/remote/web/token';
import { parseListen } from '../../../src/remote/web/listen';

test('web token: created 0600 in .legion/, kept across starts (bookmarks keep working), replaced when rotated or malformed', async () => {
  await withTempDir(async (dir) => {
    const legionDir = join(dir, '.legion');
    const first = await loadOrCreateWebToken(legionDir);
    assert.equal(first.created, true);
    assert.match(first.token, /^[A-Za-z0-9_-]{43}$/);
    const file = webTokenFile(legionDir);
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    await chmod(file, 0o644);
    const again = await loadOrCreateWebToken(legionDir);
    assert.deepEqual(again, { token: first.token, created: false });
    assert.equal((await stat(file)).mode & 0o777, 0o600, 'tightened when reused');
    const rotated = await loadOrCreateWebToken(legionDir, { rotate: true });
    assert.notEqual(rotated.token, first.token);
    await writeFile(file, 'short\n');
    const replaced = await loadOrCreateWebToken(legionDir);
    assert.equal(replaced.created, true);
    assert.equal((await readFile(file, 'utf8')).trim(), replaced.token);
    await mkdir(legionDir, { recursive: true });
  });
});

test('web token: compared in constant time over digests; empty, missing, other lengths and near misses fail', () => {
  const token = 'a'.repeat(43);
  assert.equal(tokenMatches(token, token), true);
  for (const given of [undefined, null, '', 'a', 'a'.repeat(42), 'a'.repeat(44), `${'a'.repeat(42)}b`, 'x'.repeat(10_000)]) assert.equal(tokenMatches(given, token), false, String(given).slice(0, 50));
});

test('--web [host:]port: loopback by default; hosts, IPv6 in brackets; bad specs are one clear line', () => {
  assert.deepEqual(parseListen('7420'), { ok: true, address: { host: '127.0.0.1', port: 7420 } });
  assert.deepEqual(parseListen('0.0.0.0:80'), { ok: true, address: { host: '0.0.0.0', port: 80 } });
  assert.deepEqual(parseListen('[::1]:9'), { ok: true, address: { host: '::1', port: 9 } });
  assert.deepEqual(parseListen('localhost:0'), { ok: true, address: { host: 'localhost', port: 0 } });
  assert.deepEqual(parseListen('99999'), { ok: false, error: '--web: port 99999 is out of range (0-65535)' });
  assert.deepEqual(parseListen('http://x:1'), { ok: false, error: '--web: "http://x:1" is not [host:]port (e.g. 7420, 127.0.0.1:7420, [::1]:7420)' });
});
