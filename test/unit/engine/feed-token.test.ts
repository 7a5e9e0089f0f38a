import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FEED_TOKEN_FILE, feedAuthorization, feedAuthorized, workspaceFeedToken } from '../../../src/engine/feed-token';
import { withTempDir } from '../../helpers/tmp';

const errorOf = (result: ReturnType<typeof workspaceFeedToken>): string => (result.ok ? 'no error' : result.error);

test('the feed token: made once (0600 in a 0700 folder), the same for every reader of the workspace', async () => {
  await withTempDir(async (dir) => {
    const legion = join(dir, '.legion');
    mkdirSync(legion, { mode: 0o755 });
    mkdirSync(join(legion, 'engine'), { mode: 0o755 });
    chmodSync(join(legion, 'engine'), 0o755);
    const made = workspaceFeedToken(legion);
    assert.ok(made.ok, made.ok ? '' : made.error);
    const token = made.token;
    assert.match(token, /^[A-Za-z0-9_-]{43}$/);
    assert.deepEqual(workspaceFeedToken(legion), { ok: true, token });
    assert.equal(readFileSync(join(legion, 'engine', FEED_TOKEN_FILE), 'utf8').trim(), token);
    assert.equal(statSync(join(legion, 'engine', FEED_TOKEN_FILE)).mode & 0o777, 0o600);
    assert.equal(statSync(join(legion, 'engine')).mode & 0o777, 0o700, 'an existing shared folder is made private');
  });
});

test('the feed token: a file others may read, a link or not a token is refused, never used', async () => {
  await withTempDir(async (dir) => {
    const legion = join(dir, '.legion');
    mkdirSync(join(legion, 'engine'), { recursive: true, mode: 0o700 });
    const file = join(legion, 'engine', FEED_TOKEN_FILE);
    writeFileSync(file, `${'a'.repeat(43)}\n`, { mode: 0o644 });
    chmodSync(file, 0o644);
    assert.match(errorOf(workspaceFeedToken(legion)), /^the workers' feed token: .* must be yours and private/);
    chmodSync(file, 0o600);
    assert.deepEqual(workspaceFeedToken(legion), { ok: true, token: 'a'.repeat(43) });
    writeFileSync(file, 'short\n');
    assert.match(errorOf(workspaceFeedToken(legion)), /is not a feed token/);
  });
  await withTempDir(async (dir) => {
    const legion = join(dir, '.legion');
    mkdirSync(join(legion, 'engine'), { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, 'elsewhere'), `${'b'.repeat(43)}\n`, { mode: 0o600 });
    symlinkSync(join(dir, 'elsewhere'), join(legion, 'engine', FEED_TOKEN_FILE));
    assert.match(errorOf(workspaceFeedToken(legion)), /is not a file/);
  });
});

test('the feed\'s check: the exact header only', () => {
  const token = 'c'.repeat(43);
  assert.equal(feedAuthorized(feedAuthorization(token), token), true);
  for (const header of [undefined, '', token, `Bearer ${token}x`, `bearer ${token}`, [feedAuthorization(token)]]) {
    assert.equal(feedAuthorized(header, token), false, String(header));
  }
});
