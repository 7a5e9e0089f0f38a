import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmod, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeTextAtomic } from '../../storage/atomic';
import { PRIVATE_FILE_MODE } from '../../storage/private-mode';

/** The web page's access token: 32 random bytes, base64url (43 characters). */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function webTokenFile(legionDir: string): string {
  return join(legionDir, 'web-token');
}

export function newWebToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The token kept in `.legion/web-token` (mode 0600): reused while it is well formed, so a
 * bookmarked URL keeps working across restarts; created (or replaced when `rotate`) otherwise.
 */
export async function loadOrCreateWebToken(legionDir: string, options: { rotate?: boolean } = {}): Promise<{ token: string; created: boolean }> {
  const file = webTokenFile(legionDir);
  if (!options.rotate) {
    const kept = (await readFile(file, 'utf8').catch(() => '')).trim();
    if (TOKEN_PATTERN.test(kept)) {
      await chmod(file, PRIVATE_FILE_MODE);
      return { token: kept, created: false };
    }
  }
  const token = newWebToken();
  await writeTextAtomic(file, `${token}\n`);
  return { token, created: true };
}

/**
 * Constant-time comparison: both sides are hashed to equal-length digests first, so neither
 * the content nor the length of the expected token leaks through timing.
 */
export function tokenMatches(given: string | undefined | null, expected: string): boolean {
  if (typeof given !== 'string' || given.length === 0 || given.length > 512) return false;
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}
