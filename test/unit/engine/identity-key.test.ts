import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureSigningKey, identityKeyOf } from '../../../src/engine/identity';
import { withTempDir } from '../../helpers/tmp';

// The vector is restate-server 1.x's own: started with this key as
// `worker.invoker.request-identity-private-key-pem-file`, it logged the kid below. A worker
// configured with a kid Restate does not write refuses every request of the engine.
const PEM = '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJDd46JcZez0yCGEjNZbGYQOqJtihMOCAyms2VDNjmz3\n-----END PRIVATE KEY-----\n';
const RESTATE_KID = 'publickeyv1_4JC24RsStxHMypmFAx9F3cCV4qdoimGF2AHwDs4CApWy';

test('the public key text of an Ed25519 key is the kid restate-server logs for it', () => {
  assert.equal(identityKeyOf(createPrivateKey(PEM)), RESTATE_KID);
});

test('a key that is not Ed25519 has no identity key text', () => {
  const x25519 = createPrivateKey({ key: Buffer.from('MC4CAQAwBQYDK2VuBCIEIJDd46JcZez0yCGEjNZbGYQOqJtihMOCAyms2VDNjmz3', 'base64'), format: 'der', type: 'pkcs8' });
  assert.throws(() => identityKeyOf(x25519), /not an Ed25519 key/);
});

test('the signing key: made 0600 when missing, then read back as the same key', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'request-identity.pem');
    const made = ensureSigningKey(file);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(ensureSigningKey(file), made);
    writeFileSync(join(dir, 'restate.pem'), PEM, { mode: 0o600 });
    assert.equal(ensureSigningKey(join(dir, 'restate.pem')), RESTATE_KID);
  });
});

test('a signing key others could read, a link to one, or a FIFO is refused (never read, never replaced)', { timeout: 30_000 }, async () => {
  await withTempDir(async (dir) => {
    const open = join(dir, 'open.pem');
    writeFileSync(open, PEM);
    chmodSync(open, 0o644);
    assert.throws(() => ensureSigningKey(open), /open\.pem is readable or writable by others .*must be a private file of yours: remove it/);
    const target = join(dir, 'elsewhere.pem');
    writeFileSync(target, PEM, { mode: 0o600 });
    const link = join(dir, 'link.pem');
    symlinkSync(target, link);
    assert.throws(() => ensureSigningKey(link), /link\.pem is not a regular file \(a symbolic link\)/);
    const fifo = join(dir, 'fifo.pem');
    execFileSync('mkfifo', [fifo]);
    assert.throws(() => ensureSigningKey(fifo), /fifo\.pem is not a regular file/);
    assert.equal(readFileSync(open, 'utf8'), PEM, 'the refused key was replaced');
    const garbage = join(dir, 'garbage.pem');
    writeFileSync(garbage, 'not a key', { mode: 0o600 });
    assert.throws(() => ensureSigningKey(garbage), /garbage\.pem is not an Ed25519 private key/);
  });
});
