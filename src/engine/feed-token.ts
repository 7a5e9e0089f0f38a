import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateFolder, PRIVATE_FILE_MODE, readPrivateFile } from '../storage/private-mode';

/**
 * The secret a hub and a worker prove to each other before the worker's event feed flows
 * (docs/engine.md#who-may-talk-to-what): the feed carries every session's content and the ids
 * of the awakeables approvals wait on, and the worker's port is reachable by every user of the
 * machine — who may also take it while the worker is down. The token lives in the workspace the
 * hub and its workers share, `.legion/engine/feed-token` (0600 in the 0700 folder): made by
 * whichever of them needs it first, read by the others. It never crosses the wire: each side
 * answers the other's fresh nonce with an HMAC of it (`feedProof`), the worker first, so a
 * process squatting a worker's port learns nothing and feeds the hub nothing.
 */
export const FEED_TOKEN_FILE = 'feed-token';

/** The nonce each side sends (the hub in its request, the worker in its response headers). */
export const FEED_NONCE_HEADER = 'x-legion-feed-nonce';
/** The worker's proof, in its response headers; the hub's is the request's body. */
export const FEED_PROOF_HEADER = 'x-legion-feed-proof';

export const feedNonce = (): string => randomBytes(32).toString('base64url');

/** HMAC-SHA256 of the other side's nonce under the token, labelled by who proves (no reflection). */
export const feedProof = (token: string, by: 'worker' | 'hub', nonce: string): string =>
  createHmac('sha256', token).update(`legion-feed-v1\n${by}\n${nonce}`).digest('base64url');

/** Whether `given` is `by`'s proof for `nonce` (compared in constant time). */
export function proofMatches(given: unknown, token: string, by: 'worker' | 'hub', nonce: string): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(feedProof(token, by, nonce));
  return a.length === b.length && timingSafeEqual(a, b);
}

const NONCE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * The hub's side: open the feed at `path` on `session`; `onProven` once the worker proved the
 * token (the hub then proves it in turn: the lines flow after), `onRefused` when it did not.
 * Data on the stream before `onProven` is not the feed's.
 */
export function requestFeed(session: ClientHttp2Session, path: string, token: string, onProven: () => void, onRefused: () => void): ClientHttp2Stream {
  const hubNonce = feedNonce();
  const stream = session.request({ ':path': path, ':method': 'POST', [FEED_NONCE_HEADER]: hubNonce });
  stream.on('response', (headers) => {
    const workerNonce = headers[FEED_NONCE_HEADER];
    if (typeof workerNonce !== 'string' || !proofMatches(headers[FEED_PROOF_HEADER], token, 'worker', hubNonce)) return onRefused();
    stream.end(feedProof(token, 'hub', workerNonce));
    onProven();
  });
  return stream;
}

/**
 * The worker's side of a hub's feed request: a POST carrying the hub's nonce is answered with the
 * worker's proof and a nonce of its own; `onHub` runs once the request's body is the hub's proof
 * for that nonce (within `timeoutMs`). Anything else is answered 401 or closed with no line sent.
 */
export function answerFeedHandshake(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, token: string, onHub: () => void, timeoutMs = 10_000): void {
  const hubNonce = headers[FEED_NONCE_HEADER];
  if (headers[':method'] !== 'POST' || typeof hubNonce !== 'string' || !NONCE_PATTERN.test(hubNonce)) {
    stream.respond({ ':status': 401 });
    stream.end();
    return;
  }
  const workerNonce = feedNonce();
  stream.respond({ ':status': 200, 'content-type': 'application/x-ndjson', [FEED_NONCE_HEADER]: workerNonce, [FEED_PROOF_HEADER]: feedProof(token, 'worker', hubNonce) });
  let body = '';
  let done = false;
  const refuse = (): void => {
    if (done) return;
    done = true;
    stream.close();
  };
  const timer = setTimeout(refuse, timeoutMs);
  timer.unref();
  stream.setEncoding('utf8');
  const expected = feedProof(token, 'hub', workerNonce).length;
  stream.on('data', (chunk: string) => {
    if (done) return;
    body += chunk;
    if (body.length < expected) return;
    clearTimeout(timer);
    done = true;
    if (proofMatches(body, token, 'hub', workerNonce)) onHub();
    else stream.close();
  });
  stream.once('end', () => { clearTimeout(timer); refuse(); });
  stream.once('close', () => clearTimeout(timer));
}

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
  const read = readPrivateFile(file);
  if (!read.ok) {
    if (read.missing) return undefined;
    if (read.refusal === 'not-a-file') throw new Error(`${file} is not a file: remove it (a new feed token is made)`);
    if (read.refusal === 'unreadable') throw new Error(read.message);
    throw new Error(`${file} must be yours and private (0600): another user could read the workers' feeds; remove it (a new one is made)`);
  }
  const token = read.text.trim();
  if (token === '') return undefined; // being written by another process: read again
  if (!TOKEN_PATTERN.test(token)) throw new Error(`${file} is not a feed token: remove it (a new one is made)`);
  return token;
}
