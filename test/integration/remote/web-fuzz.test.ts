import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { prng } from '../../helpers/prng';
import { withTempDir } from '../../helpers/tmp';
import { startWebFixture, type WebFixture } from '../../helpers/web-fixture';

/**
 * Hostile-input fuzzing of the web page's server (docs/remote.md#the-web-page) over real HTTP,
 * with a real core holding one pending request (apr-1). Random methods, paths, tokens (in the
 * header, as Bearer, in the query), Host headers, content types and bodies (garbage bytes,
 * truncated and mistyped JSON, prototype keys, deep nesting, oversized), plus raw sockets that
 * send garbage instead of HTTP. Invariants: no answer is a 500 and the server never stops;
 * without the token (or with it only in the query of a POST) the answer is a bare 401 and
 * nothing else; every answer carries the CSP and no cookie; apr-1 (which no authorized fuzz body names) is
 * never decided; afterwards the page still works and a real decision still runs the call.
 * Fixed seed by default; LEGION_FUZZ_SEED replays, LEGION_FUZZ_LONG=1 runs longer.
 */
const LONG = process.env.LEGION_FUZZ_LONG === '1';
const ITERATIONS = LONG ? 5000 : 400;
const SEED = Number(process.env.LEGION_FUZZ_SEED ?? (LONG ? Math.floor(Math.random() * 2 ** 31) : 20261126));
const ALLOWED = new Set([200, 400, 401, 403, 404, 405, 409, 413, 415, 431, 501, 503]);

interface Shot {
  readonly method: string;
  readonly path: string;
  readonly headers: OutgoingHttpHeaders;
  readonly body?: Buffer;
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

function shoot(port: number, shot: Shot): Promise<Answer | { error: string }> {
  return new Promise((resolve) => {
    let req;
    try {
      req = httpRequest({ host: '127.0.0.1', port, method: shot.method, path: shot.path, headers: shot.headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      // An authorized event stream never ends: its head is the answer.
      if (String(res.headers['content-type']).startsWith('text/event-stream')) {
        res.destroy();
        return resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '' });
      }
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (e) => resolve({ error: e.message }));
    });
    } catch (error) {
      // Node's client refuses to send some of them (a raw control character in a header or the path).
      return resolve({ error: `unsendable: ${(error as Error).message}` });
    }
    // A refused body (413) may close the socket while we still write: that is the server's right.
    req.on('error', (e) => resolve({ error: e.message }));
    req.end(shot.body);
  });
}

function isLoopbackName(host: string): boolean {
  const name = host.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return name === 'localhost' || name === '::1' || /^127\.\d+\.\d+\.\d+$/.test(name);
}

function generator(random: () => number, f: WebFixture) {
  const int = (n: number): number => Math.floor(random() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const chars = ['a', 'Z', '0', '-', '_', '/', '.', '%', '?', '&', '=', '#', '<', '>', '"', "'", ' ', '\\', 'é', '💥', '\u0000', '\u202e'];
  const junk = (max: number): string => Array.from({ length: int(max) }, () => pick(chars)).join('');
  const tokens = [f.token, `${f.token} `, f.token.slice(1), f.token.toUpperCase(), `${f.token}x`, '', 'x'.repeat(10_000), 'ä'.repeat(43), junk(60)];
  const paths = ['/', '/app.js', '/app.css', '/events', '/api/state', '/api/history', '/api/approvals', '/api/reply', '/api/../api/state', '//api/state',
    '/%2e%2e/%2e%2e/etc/passwd', '/API/STATE', '/api/state/', `/${'a'.repeat(3000)}`, '/api/history?session=<script>', '/favicon.ico'];
  const ids = ['x', 'apr-2', 'apr-99', '', 'a'.repeat(300), '__proto__', '<img src=x onerror=1>'];
  const bodies: (() => string | Buffer)[] = [
    () => Buffer.from(Array.from({ length: int(300) }, () => int(256))),
    () => JSON.stringify({ requestIds: [pick(ids)], decision: pick(['approved', 'rejected', 'maybe', '', 1]) }).slice(0, int(60)),
    () => JSON.stringify({ requestIds: Array.from({ length: int(5) }, () => pick(ids)), decision: pick(['approved', 'rejected']), reason: junk(50) }),
    () => JSON.stringify({ requestIds: pick([null, 1, 'x', [1], [{}], {}]), decision: pick([null, true, 'approved']) }),
    () => '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}},"requestIds":["x"],"decision":"approved"}',
    () => `${'['.repeat(5000)}${']'.repeat(5000)}`,
    () => JSON.stringify({ sessionId: pick(['session-worker__user__default', junk(20), '']), text: junk(100) }),
    () => JSON.stringify({ sessionId: 's', text: 'x'.repeat(70_000 + int(10_000)) }),
    () => JSON.stringify(junk(40)),
    () => '',
  ];
  return (): Shot => {
    const method = pick(['GET', 'GET', 'POST', 'POST', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD']);
    const headers: OutgoingHttpHeaders = {};
    const roll = random();
    const where = roll < 0.45 ? 0 : roll < 0.6 ? 1 : roll < 0.85 ? 2 : 3;
    // Half the time the right token, so the handlers behind the check are fuzzed too.
    const token = random() < 0.5 ? f.token : pick(tokens);
    if (where === 0) headers['x-legion-token'] = token;
    if (where === 1) headers.authorization = pick([`Bearer ${token}`, `bearer ${token}`, `Basic ${token}`, token]);
    let path = method === 'POST' && random() < 0.7 ? pick(['/api/approvals', '/api/reply']) : pick(paths);
    if (where === 2 || int(4) === 0) path += `${path.includes('?') ? '&' : '?'}token=${pick([encodeURIComponent(token), token.slice(0, 50), junk(20)])}`;
    if (int(6) === 0) headers.host = pick(['evil.example', `evil.example:${f.web.port}`, 'localhost', '[::1]:1', '127.0.0.1.evil.example', '127.1.2.3']);
    if (method !== 'GET' && method !== 'HEAD') {
      headers['content-type'] = random() < 0.6 ? 'application/json' : pick(['application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'APPLICATION/JSON']);
    }
    const body = method === 'GET' || method === 'HEAD' ? undefined : pick(bodies)();
    return { method, path, headers, ...(body === undefined ? {} : { body: Buffer.isBuffer(body) ? body : Buffer.from(body) }) };
  };
}

/** What the server must see as the token: the header, else Bearer, else (GET only) the query. */
function authorized(shot: Shot, token: string): boolean {
  // HTTP drops a header value's leading and trailing whitespace.
  const trim = (v: unknown): string | undefined => (typeof v === 'string' ? v.replace(/^[ \t]+|[ \t]+$/g, '') : undefined);
  const header = trim(shot.headers['x-legion-token']);
  const auth = trim(shot.headers.authorization);
  const bearer = auth?.startsWith('Bearer ') ? auth.slice(7) : undefined;
  const query = shot.method === 'GET' ? new URL(shot.path, 'http://localhost').searchParams.get('token') ?? undefined : undefined;
  return (typeof header === 'string' ? header : bearer ?? query) === token;
}

test(`web fuzz (seed ${SEED}): ${ITERATIONS} hostile requests and garbage sockets: no 500, no crash, no answer without the token, no decision`, { timeout: 300_000 }, async () => {
  await withTempDir(async (dir) => {
    const f = await startWebFixture(dir, { maxBodyBytes: 64 * 1024 });
    try {
      const sent = f.h.core.send('worker', 'write a');
      assert.ok(sent.ok);
      await f.h.waitFor((e) => e.type === 'approval-request' && e.requestId === 'apr-1');
      const random = prng(SEED);
      const next = generator(random, f);
      const tally = new Map<number, number>();
      let unsendable = 0;
      let cut = 0;
      for (let i = 0; i < ITERATIONS; i += 8) {
        const shots = Array.from({ length: Math.min(8, ITERATIONS - i) }, next);
        const answers = await Promise.all(shots.map((s) => shoot(f.web.port, s)));
        shots.forEach((shot, k) => {
          const answer = answers[k]!;
          const what = `#${i + k} ${shot.method} ${shot.path.slice(0, 80)} ${JSON.stringify(shot.headers).slice(0, 200)}`;
          if ('error' in answer) {
            if (answer.error.startsWith('unsendable')) return void (unsendable += 1);
            // Only a refused oversized body (over the 64 KiB cap) may cut the connection; anything else gets an HTTP answer.
            assert.ok((shot.body?.length ?? 0) > 64 * 1024, `${what}: ${answer.error}`);
            assert.match(answer.error, /ECONNRESET|socket hang up|EPIPE/, what);
            cut += 1;
            return;
          }
          tally.set(answer.status, (tally.get(answer.status) ?? 0) + 1);
          // Node's parser refuses a request it cannot read (headers over 16 KiB, a raw byte in the path) before any handler runs: an empty 400/431.
          if (answer.headers['content-security-policy'] === undefined) {
            assert.ok(answer.status === 400 || answer.status === 431, `${what} → ${answer.status} without the server's headers`);
            return void assert.equal(answer.body, '', what);
          }
          assert.ok(ALLOWED.has(answer.status), `${what} → ${answer.status} ${answer.body.slice(0, 200)}`);
          assert.match(String(answer.headers['content-security-policy']), /default-src 'none'/, what);
          assert.equal(answer.headers['set-cookie'], undefined, `${what}: no cookies, ever`);
          const hostOk = isLoopbackName(String(shot.headers.host ?? '127.0.0.1'));
          if (!hostOk) {
            assert.equal(answer.status, 403, what);
            assert.equal(answer.body, shot.method === 'HEAD' ? '' : 'forbidden host\n', what);
          } else if (!authorized(shot, f.token)) {
            assert.equal(answer.status, 401, what);
            assert.equal(answer.body, shot.method === 'HEAD' ? '' : 'unauthorized\n', what);
          }
          if (answer.status !== 401 && answer.status !== 403 && shot.method !== 'HEAD' && String(answer.headers['content-type']).startsWith('application/json')) {
            JSON.parse(answer.body);
          }
        });
      }
      // Garbage instead of HTTP: the parser refuses it, the server goes on.
      for (let i = 0; i < 20; i++) {
        await new Promise<void>((resolve) => {
          const socket = connect(f.web.port, '127.0.0.1', () => {
            socket.end(Buffer.from(Array.from({ length: 1 + Math.floor(random() * 2000) }, () => Math.floor(random() * 256))));
          });
          socket.on('data', () => undefined);
          socket.on('error', () => resolve());
          socket.on('close', () => resolve());
        });
      }
      assert.ok(unsendable < ITERATIONS / 4, `${unsendable} of ${ITERATIONS} could not be sent`);
      assert.ok(cut < ITERATIONS / 4, `${cut} of ${ITERATIONS} connections cut`);
      for (const status of [200, 400, 401, 403, 404, 405, 409, 413, 415]) assert.ok((tally.get(status) ?? 0) > 0, `no ${status} among the answers: ${JSON.stringify([...tally])}`);
      assert.equal(({} as { polluted?: number }).polluted, undefined, 'no prototype pollution');
      // apr-1 was never decided, and the page still works: a real decision runs the call.
      assert.deepEqual(f.h.core.pendingApprovals().map((p) => p.requestId), ['apr-1']);
      const ok = await fetch(`${f.base}/api/approvals`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-legion-token': f.token }, body: JSON.stringify({ requestIds: ['apr-1'], decision: 'approved' }) });
      assert.equal(ok.status, 200);
      await f.h.core.idle(sent.sessionId);
      assert.ok(existsSync(join(dir, 'a.txt')));
    } finally {
      await f.close();
    }
  });
});
