import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { answer, decide, historyOf, stateOf, type ApiResult, type WebCore } from './api';
import { APP_CSS, APP_JS, pageHtml } from './page';
import { createSseHub } from './sse';
import { tokenMatches } from './token';
import { eventView } from './view';
import { DEFAULT_WEB_HOST, isLoopback } from './listen';

/**
 * The web page (docs/remote.md#the-web-page): node:http, no framework. Every request needs
 * the token — in the `token` query parameter for GET (the page, its script and style, the
 * event stream), in the `x-legion-token` header (or `Authorization: Bearer`) for everything;
 * state-changing POSTs accept the header only, so a cross-site form or link cannot act (no
 * cookies are used at all). Without a valid token the answer is a bare 401.
 */
export interface WebDeps {
  readonly core: WebCore;
  readonly token: string;
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** POST bodies larger than this are refused with 413 (default 64 KiB). */
  readonly maxBodyBytes?: number;
  /** An event-stream client with more unsent data than this is cut off (default 1 MiB). */
  readonly maxClientBufferBytes?: number;
  /** Event-stream clients at once; more get a 503 (default 32). */
  readonly maxClients?: number;
  /** Connections that have not yet made a request with the token; past this many the oldest is closed (default 64). */
  readonly maxUnauthenticated?: number;
  /** A connection that has made no request with the token this long after it opened is closed (default 10 s). */
  readonly unauthenticatedTimeoutMs?: number;
}

export interface WebHandle {
  /** `http://host:port/?token=…`: print it once, it is the key. */
  readonly url: string;
  readonly port: number;
  /** Open event-stream clients. */
  clients(): number;
  /** Open connections: all of them, and those that have not yet shown the token. */
  connections(): { readonly total: number; readonly unauthenticated: number };
  close(): Promise<void>;
}

const CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "img-src 'self' data:",
  "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sendJson(res: ServerResponse, result: ApiResult): void {
  send(res, result.status, 'application/json; charset=utf-8', JSON.stringify(result.body));
}

function headerToken(req: IncomingMessage): string | undefined {
  const header = req.headers['x-legion-token'];
  if (typeof header === 'string') return header;
  const auth = req.headers.authorization;
  return auth?.startsWith('Bearer ') ? auth.slice(7) : undefined;
}

/** Reads a JSON body of at most `limit` bytes; `null` when it is too large or not JSON. */
function readJson(req: IncomingMessage, limit: number): Promise<{ ok: true; value: unknown } | { ok: false; status: number; error: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (value: Awaited<ReturnType<typeof readJson>>): void => {
      if (done) return;
      done = true;
      resolve(value);
    };
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        finish({ ok: false, status: 413, error: `body larger than ${limit} bytes` });
        req.pause();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      try {
        finish({ ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      } catch {
        finish({ ok: false, status: 400, error: 'body is not JSON' });
      }
    });
    req.on('error', () => finish({ ok: false, status: 400, error: 'body could not be read' }));
  });
}

export async function startWeb(deps: WebDeps): Promise<WebHandle> {
  const host = deps.host ?? DEFAULT_WEB_HOST;
  const maxBody = deps.maxBodyBytes ?? 64 * 1024;
  const maxClients = deps.maxClients ?? 32;
  const hub = createSseHub({ maxBufferedBytes: deps.maxClientBufferBytes ?? 1024 * 1024, headers: SECURITY_HEADERS });
  const unsubscribe = deps.core.bus.subscribeAll((event) => hub.broadcast(event.seq, eventView(event)));
  let port = 0;
  // On loopback the Host header must name loopback too: a DNS-rebinding page gets a 403 even before the token check.
  const hostAllowed = (req: IncomingMessage): boolean => {
    if (!isLoopback(host)) return true;
    const name = (req.headers.host ?? '').replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
    return isLoopback(name);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!hostAllowed(req)) return send(res, 403, 'text/plain; charset=utf-8', 'forbidden host\n');
    const method = req.method ?? 'GET';
    const given = headerToken(req) ?? (method === 'GET' ? url.searchParams.get('token') : undefined);
    if (!tokenMatches(given, deps.token)) return send(res, 401, 'text/plain; charset=utf-8', 'unauthorized\n');
    gate.authenticated(req.socket);

    if (method === 'GET') {
      switch (url.pathname) {
        case '/': return send(res, 200, 'text/html; charset=utf-8', pageHtml(deps.token));
        case '/app.js': return send(res, 200, 'text/javascript; charset=utf-8', APP_JS);
        case '/app.css': return send(res, 200, 'text/css; charset=utf-8', APP_CSS);
        case '/events':
          if (hub.size() >= maxClients) return sendJson(res, { status: 503, body: { error: `at most ${maxClients} pages may follow the run at once` } });
          return void hub.add(res);
        case '/api/state': return sendJson(res, stateOf(deps.core));
        case '/api/history': return sendJson(res, historyOf(deps.core, url.searchParams.get('session')));
        default: return sendJson(res, { status: 404, body: { error: 'not found' } });
      }
    }
    if (method === 'POST' && (url.pathname === '/api/approvals' || url.pathname === '/api/reply')) {
      if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) return sendJson(res, { status: 415, body: { error: 'send application/json' } });
      const body = await readJson(req, maxBody);
      if (!body.ok) {
        sendJson(res, { status: body.status, body: { error: body.error } });
        if (body.status === 413) req.destroy();
        return;
      }
      return sendJson(res, url.pathname === '/api/approvals' ? decide(deps.core, body.value) : answer(deps.core, body.value));
    }
    return sendJson(res, { status: 405, body: { error: 'method not allowed' } });
  };

  const gate = createConnectionGate(deps.maxUnauthenticated ?? 64, deps.unauthenticatedTimeoutMs ?? 10_000);
  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) sendJson(res, { status: 500, body: { error: 'internal error' } });
      else res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.on('connection', gate.opened);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(deps.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}/?token=${deps.token}`,
    port,
    clients: () => hub.size(),
    connections: () => gate.counts(),
    close: () =>
      new Promise<void>((resolve) => {
        unsubscribe();
        hub.closeAll();
        gate.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Connections that have not shown the token (docs/remote.md#the-web-page): anyone who can reach
 * the port can open them, and an idle one would otherwise hold a file descriptor of the Legion
 * process for ever (node:http has no idle limit before the first request). At most `max` at
 * once — a new one past that closes the oldest (so a flood churns through itself while a real
 * client, which sends its request at once, gets through) — and each is closed `timeoutMs`
 * after it opened unless a request with the token came first. Authenticated connections are
 * left to node:http's own keep-alive and request timeouts.
 */
function createConnectionGate(max: number, timeoutMs: number) {
  /** Insertion order is age: the first is the oldest. */
  const waiting = new Map<Socket, NodeJS.Timeout>();
  let total = 0;
  const forget = (socket: Socket): void => {
    const timer = waiting.get(socket);
    if (timer === undefined) return;
    clearTimeout(timer);
    waiting.delete(socket);
  };
  return {
    opened(socket: Socket): void {
      total += 1;
      socket.once('close', () => {
        total -= 1;
        forget(socket);
      });
      while (waiting.size >= max) {
        const oldest = waiting.keys().next().value!;
        forget(oldest);
        oldest.destroy();
      }
      const timer = setTimeout(() => {
        waiting.delete(socket);
        socket.destroy();
      }, timeoutMs);
      timer.unref();
      waiting.set(socket, timer);
    },
    authenticated: forget,
    counts: () => ({ total, unauthenticated: waiting.size }),
    close(): void {
      for (const timer of waiting.values()) clearTimeout(timer);
      waiting.clear();
    },
  };
}
