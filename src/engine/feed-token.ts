import { randomBytes, timingSafeEqual } from 'node:crypto';
import { lstatSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateFolder, PRIVATE_FILE_MODE } from '../storage/private-mode';

/**
 * The secret a hub shows a worker to follow its event feed (docs/engine.md#who-may-talk-to-what):
 * the feed carries every session's content and the ids of the awakeables approvals wait on, and
 * the worker's port is reachable by every user of the machine. The token lives in the workspace
 * the hub and its workers share, `.legion/engine/feed-token` (0600 in the 0700 folder): made by
 * whichever of them needs it first, read by the others.
 */
export const FEED_TOKEN_FILE = 'feed-token';

/** The header a hub sends with its token: `authorization: Bearer <token>`. */
export const feedAuthorization = (token: string): string => `Bearer ${token}`;

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The workspace's feed token, made when there is none; or why not (a file not private, not a token; a folder not the user's), in one line. */
export function workspaceFeedToken(legionDir: string): { ok: true; token: string } | { ok: false; error: string } {
  try {
    return { ok: true, token: feedTokenIn(legionDir) };
  } catch (error) {
    return { ok: false, error: `the workers' feed token: ${(error as Error).message}` };
  }
}

function feedTokenIn(legionDir: string): string {
  const dir = join(legionDir, 'engine');
  const file = join(dir, FEED_TOKEN_FILE);
  ensurePrivateFolder(dir);
  for (let tries = 0; tries < 2; tries++) {
    const read = readToken(file);
    if (read !== undefined) return read;
    try {
      // 'wx': a hub and a worker starting together make it once; the other reads it.
      writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  const token = readToken(file);
  if (token === undefined) throw new Error(`${file}: could not make the feed token`);
  return token;
}

function readToken(file: string): string | undefined {
  let stat;
  try {
    stat = lstatSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  if (!stat.isFile()) throw new Error(`${file} is not a file: remove it (a new feed token is made)`);
  if ((stat.mode & 0o077) !== 0 || (typeof process.getuid === 'function' && stat.uid !== process.getuid())) {
    throw new Error(`${file} must be yours and private (0600): another user could read the workers' feeds; remove it (a new one is made)`);
  }
  const token = readFileSync(file, 'utf8').trim();
  if (token === '') return undefined; // being written by another process: read again
  if (!TOKEN_PATTERN.test(token)) throw new Error(`${file} is not a feed token: remove it (a new one is made)`);
  return token;
}

/** Whether an `authorization` header carries `token` (compared in constant time). */
export function feedAuthorized(header: string | string[] | undefined, token: string): boolean {
  if (typeof header !== 'string') return false;
  const given = Buffer.from(header);
  const expected = Buffer.from(feedAuthorization(token));
  return given.length === expected.length && timingSafeEqual(given, expected);
}
