import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import bs58 from 'bs58';
import { PRIVATE_FILE_MODE, readPrivateFile } from '../storage/private-mode';

/** An Ed25519 PKCS#8 PEM is ~120 bytes: anything much larger is not one. */
const SIGNING_KEY_MAX_BYTES = 16 * 1024;

/**
 * Restate's request identity (docs/engine.md#who-may-talk-to-what): the engine signs every
 * request it sends a worker with an Ed25519 private key (restate-server's
 * `worker.invoker.request-identity-private-key-pem-file`), and the worker's endpoint refuses a
 * request whose signature does not verify against one of its public keys. The public key's
 * text form is Restate's: `publickeyv1_` and the raw 32-byte key in base58 (restate-server logs
 * it at start as the key's `kid`).
 */
export { IDENTITY_KEY_PATTERN } from '../config/engine-schema';

/** The `publickeyv1_…` text of an Ed25519 key (private or public). */
export function identityKeyOf(key: KeyObject): string {
  const jwk = (key.type === 'private' ? createPublicKey(key) : key).export({ format: 'jwk' });
  if (jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') throw new Error('not an Ed25519 key');
  return `publickeyv1_${bs58.encode(Buffer.from(jwk.x, 'base64url'))}`;
}

/**
 * The engine's signing key in `file` (PKCS#8 PEM, 0600), made there when there is none yet;
 * returns its public key. It is read as a private file (src/storage/private-mode.ts: this user's,
 * no link, no FIFO, readable by no one else): a key others could read would let them sign
 * requests to the workers. An existing file that is refused, or is not an Ed25519 private key, is
 * an error (never replaced silently: the workers configured with its public key would refuse the
 * engine).
 */
export function ensureSigningKey(file: string): string {
  const read = readPrivateFile(file, { maxBytes: SIGNING_KEY_MAX_BYTES });
  if (read.ok) {
    try {
      return identityKeyOf(createPrivateKey(read.text));
    } catch (error) {
      throw new Error(`${file} is not an Ed25519 private key (${(error as Error).message}): remove it to make a new one`);
    }
  }
  if (!read.missing) throw new Error(`${read.message}: the engine's signing key must be a private file of yours: remove it to make a new one`);
  const { privateKey } = generateKeyPairSync('ed25519');
  // 'wx': never over a file another process made meanwhile (nor through a planted symlink).
  writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  return identityKeyOf(privateKey);
}
