import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey } from 'node:crypto';
import { identityKeyOf } from '../../../src/engine/identity';

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
