import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { until } from '../../helpers/processes';
import { withTempDir } from '../../helpers/tmp';
import { HOSTILE_IMG, HOSTILE_SCRIPT, startWebFixture, type WebFixture } from '../../helpers/web-fixture';

/** The web page's server (docs/remote.md#the-web-page) over HTTP with a real core: auth, headers, bodies, escaping, decisions, the event stream. */

async function call(f: WebFixture, path: string, init: RequestInit = {}): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(`${f.base}${path}`, init);
  return { status: res.status, text: await res.text(), headers: res.headers };
}

const json = (f: WebFixture, body: unknown, extra: Record<string, string> = {}): RequestInit => ({
  method: 'POST', headers: { 'content-type': 'application/json', 'x-legion-token': f.token, ...extra }, body: typeof body === 'string' ? body : JSON.stringify(body),
});

test('web: no token, a wrong token (any length), or a query token on a POST gets a bare 401 on every path', async () => {
  await withTempDir(async (dir) => {
    const f = await startWebFixture(dir);
    try {
      const wrongSameLength = f.token.replace(/^./, (c) => (c === 'A' ? 'B' : 'A'));
      for (const path of ['/', '/app.js', '/app.css', '/events', '/api/state', '/api/history?session=x', '/nope']) {
        for (const suffix of ['', `${path.includes('?') ? '&' : '?'}token=${wrongSameLength}`, `${path.includes('?') ? '&' : '?'}token=short`]) {
          const res = await call(f, path + suffix);
          assert.equal(res.status, 401, `${path}${suffix}`);
          assert.equal(res.text, 'unauthorized\n');
        }
        const header = await call(f, path, { headers: { 'x-legion-token': wrongSameLength } });
        assert.equal(header.status, 401);
      }
      for (const path of ['/api/approvals', '/api/reply']) {
        for (const headers of [{}, { 'x-legion-token': wrongSameLength }, { authorization: `Bearer ${wrongSameLength}` }, { 'x-legion-token': '' }] as Record<string, string>[]) {
          const res = await call(f, path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{"requestIds":["apr-1"],"decision":"approved"}' });
          assert.equal(res.status, 401, `POST ${path} ${JSON.stringify(headers)}`);
          assert.equal(res.text, 'unauthorized\n');
        }
      }
      const post = await call(f, `/api/approvals?token=${f.token}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"requestIds":["apr-1"],"decision":"approved"}' });
      assert.equal(post.status, 401, 'a POST needs the header: a link or a cross-site form cannot act');
      assert.equal((await call(f, '/api/state', { headers: { authorization: `Bearer ${f.token}` } })).status, 200);
    } finally {
      await f.close();
    }
  });
});

test('web: a request naming another host (DNS rebinding) is refused on loopback', async () => {
  await withTempDir(async (dir) => {
    const f = await startWebFixture(dir);
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port: f.web.port, path: `/api/state?token=${f.token}`, headers: { host: `evil.example:${f.web.port}` } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(status, 403);
    } finally {
      await f.close();
    }
  });
});

test('web: the page has a strict CSP, no inline script, nosniff, no framing; the script and style are served with the token', async () => {
  await withTempDir(async (dir) => {
    const f = await startWebFixture(dir);
    try {
      const page = await call(f, `/?token=${f.token}`);
      assert.equal(page.status, 200);
      const csp = page.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
      assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
      assert.match(page.text, /<meta name="viewport" content="width=device-width, initial-scale=1">/);
      const scripts = [...page.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
      assert.equal(scripts.length, 1);
      assert.match(scripts[0]![1]!, /src="\/app\.js\?token=/);
      assert.equal(scripts[0]![2], '', 'no inline script');
      assert.doesNotMatch(page.text, /style="/);
      const js = await call(f, `/app.js?token=${f.token}`);
      assert.equal(js.status, 200);
      assert.match(js.headers.get('content-type')!, /^text\/javascript/);
      assert.match((await call(f, `/app.css?token=${f.token}`)).text, /@media \(max-width:600px\)/);
      // The event stream carries the same headers (the fuzz test found it did not).
      const stream = await fetch(`${f.base}/events?token=${f.token}`);
      assert.equal(stream.status, 200);
      assert.equal(stream.headers.get('content-security-policy'), csp);
      assert.equal(stream.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(stream.headers.get('referrer-policy'), 'no-referrer');
      await stream.body!.cancel();
      // Loopback unless a host is chosen: the server's own URL says where it listens.
      assert.match(f.web.url, new RegExp(`^http://127\\.0\\.0\\.1:${f.web.port}/\\?token=${f.token}$`));
    } finally {
      await f.close();
    }
  });
});

test('web: bad bodies are refused with one clear line: not JSON, wrong shape, extra keys, too large, wrong type, unknown id', async () => {
  await withTempDir(async (dir) => {
    const f = await startWebFixture(dir, { maxBodyBytes: 1024 });
    try {
      const cases: [unknown, number, RegExp][] = [
        ['{not json', 400, /^body is not JSON$/],
        [{ requestIds: [], decision: 'approved' }, 400, /^requestIds: /],
        [{ requestIds: ['apr-1'], decision: 'maybe' }, 400, /^decision: /],
        [{ requestIds: ['apr-1'], decision: 'approved', admin: true }, 400, /admin|Unrecognized/],
        [{ requestIds: 'apr-1', decision: 'approved' }, 400, /^requestIds: /],
        [{ requestIds: ['x'.repeat(2000)], decision: 'approved' }, 413, /^body larger than 1024 bytes$/],
        [{ requestIds: ['apr-99'], decision: 'approved' }, 409, /apr-99/],
      ];
      for (const [body, status, message] of cases) {
        const res = await call(f, '/api/approvals', json(f, body));
        assert.equal(res.status, status, JSON.stringify(body).slice(0, 80));
        assert.match((JSON.parse(res.text) as { error: string }).error, message);
      }
      const wrongType = await call(f, '/api/approvals', { method: 'POST', headers: { 'x-legion-token': f.token, 'content-type': 'text/plain' }, body: '{}' });
      assert.equal(wrongType.status, 415);
      assert.equal((await call(f, '/api/reply', json(f, { sessionId: 's', text: '' }))).status, 400);
      assert.equal((await call(f, '/api/reply', json(f, { sessionId: 'session-worker__user__x', text: 'hi' }))).status, 409);
      assert.equal((await call(f, '/api/state', { method: 'DELETE', headers: { 'x-legion-token': f.token } })).status, 405);
      assert.equal((await call(f, '/api/history?session=nope', { headers: { 'x-legion-token': f.token } })).status, 404);
    } finally {
      await f.close();
    }
  });
});

test('web: an approval decided through the API runs the call; the audit says remote:web; a second decision is refused', async () => {
  await withTempDir(async (dir) => {
    const f = await startWebFixture(dir);
    try {
      const sent = f.h.core.send('worker', 'write a');
      assert.ok(sent.ok);
      await f.h.waitFor((e) => e.type === 'approval-request');
      const state = JSON.parse((await call(f, '/api/state', { headers: { 'x-legion-token': f.token } })).text) as { pending: { requestId: string; key: string; chain: string[] }[] };
      assert.deepEqual(state.pending.map((p) => [p.requestId, p.key, p.chain]), [['apr-1', 'a.txt', ['user', 'worker']]]);
      const ok = await call(f, '/api/approvals', json(f, { requestIds: ['apr-1'], decision: 'approved' }));
      assert.equal(ok.status, 200, ok.text);
      await f.h.core.idle(sent.sessionId);
      assert.ok(existsSync(join(dir, 'a.txt')));
      assert.deepEqual(f.h.audit().filter((a) => a.requestId).map((a) => [a.requestId, a.decision, a.decidedBy]), [['apr-1', 'approved', 'remote:web']]);
      const again = await call(f, '/api/approvals', json(f, { requestIds: ['apr-1'], decision: 'rejected' }));
      assert.equal(again.status, 409);
      assert.match(again.text, /already approved \(by remote:web\)/);
    } finally {
      await f.close();
    }
  });
});

test('web: a model\'s hostile text comes out of /api/history and the event stream escaped', async () => {
  await withTempDir(async (dir) => {
    const f = await startWebFixture(dir);
    try {
      const frames: string[] = [];
      const stream = await fetch(`${f.base}/events?token=${f.token}`);
      assert.equal(stream.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      const reader = stream.body!.getReader();
      const reading = (async () => {
        const decoder = new TextDecoder();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          frames.push(decoder.decode(value));
          if (frames.join('').includes('window.__pwned = 2')) return;
        }
      })();
      const sent = f.h.core.send('worker', 'hostile');
      assert.ok(sent.ok);
      await f.h.core.idle(sent.sessionId);
      await reading;
      await reader.cancel();
      const history = JSON.parse((await call(f, `/api/history?session=${sent.sessionId}`, { headers: { 'x-legion-token': f.token } })).text) as { items: { kind: string; html?: string }[] };
      const html = history.items.filter((i) => i.kind === 'text').map((i) => i.html).join('\n');
      assert.ok(html.includes('&lt;script&gt;window.__pwned = 1&lt;/script&gt;'), html);
      assert.ok(html.includes('&quot;&gt;&lt;img src=x onerror=&quot;window.__pwned = 2&quot;&gt;'), html);
      assert.ok(html.includes('<code>code &lt;b&gt;</code>'), html);
      assert.doesNotMatch(html, /<script|<img/);
      const streamed = frames.join('');
      assert.match(streamed, /^retry: 2000\n\n/);
      assert.match(streamed, /id: \d+\ndata: \{"type":"message-add"/);
      assert.ok(streamed.includes('&lt;script&gt;window.__pwned = 1&lt;/script&gt;'));
      const events = [...streamed.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as { type: string; text?: string });
      const deltas = events.filter((e) => e.type === 'text-delta').map((e) => e.text).join('');
      assert.ok(deltas.includes(HOSTILE_SCRIPT) && deltas.includes(HOSTILE_IMG), 'raw text only in text-delta, which the page sets as textContent');
      assert.doesNotMatch(JSON.stringify(events.filter((e) => e.type !== 'text-delta')), /<script|<img/);
    } finally {
      await f.close();
    }
  });
});

test('web: an event-stream client that stops reading is cut off; the core and other clients go on', async () => {
  await withTempDir(async (dir) => {
    const f = await startWebFixture(dir, { maxClientBufferBytes: 64 * 1024 });
    try {
      const socket = connect(f.web.port, '127.0.0.1');
      socket.write(`GET /events?token=${f.token} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      socket.pause();
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      await until(() => f.web.clients() > 0, 'the event stream to be served');
      assert.equal(f.web.clients(), 1);
      const big = 'x'.repeat(16 * 1024);
      for (let i = 0; i < 2000 && f.web.clients() > 0; i++) {
        f.h.core.bus.emit({ type: 'notice', level: 'info', message: big });
        if (i % 50 === 0) await new Promise((r) => setImmediate(r));
      }
      assert.equal(f.web.clients(), 0, 'the stalled client was dropped');
      socket.resume();
      socket.on('data', () => undefined);
      await closed;
      const state = await call(f, '/api/state', { headers: { 'x-legion-token': f.token } });
      assert.equal(state.status, 200, 'the server still answers');
    } finally {
      await f.close();
    }
  });
});

test('web: at most maxClients event streams at once; the next gets a 503 until one leaves', async () => {
  await withTempDir(async (dir) => {
    const f = await startWebFixture(dir, { maxClients: 2 });
    try {
      const a = await fetch(`${f.base}/events?token=${f.token}`);
      const b = await fetch(`${f.base}/events?token=${f.token}`);
      assert.equal(a.status, 200);
      assert.equal(b.status, 200);
      const c = await fetch(`${f.base}/events?token=${f.token}`);
      assert.equal(c.status, 503);
      assert.match(await c.text(), /at most 2 pages/);
      await a.body!.cancel();
      await until(() => f.web.clients() <= 1, 'the cancelled stream to leave');
      const d = await fetch(`${f.base}/events?token=${f.token}`);
      assert.equal(d.status, 200);
      await b.body!.cancel();
      await d.body!.cancel();
    } finally {
      await f.close();
    }
  });
});
