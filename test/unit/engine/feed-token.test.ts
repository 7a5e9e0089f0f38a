import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, connect } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { answerFeedHandshake, FEED_TOKEN_FILE, feedProof, proofMatches, requestFeed, workspaceFeedToken } from '../../../src/engine/feed-token';
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

/** A worker's side on a real HTTP/2 server (`token`), a hub's client (`hubToken`): whether the hub was proven, and what reached it. */
async function handshake(token: string, hubToken: string): Promise<{ proven: boolean; refused: boolean; served: boolean; got: string }> {
  let served = false;
  const server = createServer();
  server.on('stream', (stream, headers) => answerFeedHandshake(stream, headers, token, () => { served = true; stream.write('line\n'); }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const session = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  try {
    return await new Promise((resolve) => {
      let proven = false;
      let got = '';
      const stream = requestFeed(session, '/legion/events', hubToken, () => { proven = true; }, () => resolve({ proven, refused: true, served, got }));
      stream.on('data', (d: Buffer) => { got += d.toString(); if (got.includes('\n')) resolve({ proven, refused: false, served, got }); });
      stream.on('close', () => resolve({ proven, refused: false, served, got }));
    });
  } finally {
    session.destroy();
    server.close();
  }
}

test('the feed\'s handshake: each side proves the token on the other\'s fresh nonce; the token never crosses', async () => {
  const token = 'c'.repeat(43);
  assert.deepEqual(await handshake(token, token), { proven: true, refused: false, served: true, got: 'line\n' });
  // A worker without the token (a process squatting the port): the hub refuses it before any line.
  assert.deepEqual(await handshake('d'.repeat(43), token), { proven: false, refused: true, served: false, got: '' });
  // Proofs are labelled: a worker's proof is not a hub's for the same nonce.
  assert.notEqual(feedProof(token, 'worker', 'n'.repeat(43)), feedProof(token, 'hub', 'n'.repeat(43)));
  assert.equal(proofMatches(feedProof(token, 'hub', 'n'.repeat(43)), token, 'hub', 'n'.repeat(43)), true);
  for (const given of [undefined, '', token, feedProof(token, 'worker', 'n'.repeat(43)), feedProof('e'.repeat(43), 'hub', 'n'.repeat(43))]) {
    assert.equal(proofMatches(given, token, 'hub', 'n'.repeat(43)), false, String(given));
  }
});
