import { performance } from 'node:perf_hooks';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { anthropicHistoryError, invalidRequestBody, openaiHistoryError } from './history-rules';
import { anthropicToolsError, openaiToolsError } from './tool-schema-rules';

/**
 * A local stand-in for the Anthropic (`POST /v1/messages`) and OpenAI
 * (`POST /v1/chat/completions`) APIs, for provider tests with the real SDKs.
 * Responses are scripted as a queue (one per request, in order, whatever the path); when the
 * queue is empty, `fallback` answers (default: a 500 naming the problem). Every request is
 * recorded with its parsed JSON body, and whether the client hung up before the response ended.
 * With `strictHistory`, a request whose history the real API would refuse (a tool_use without
 * its tool_result, an orphan result, empty text...) gets that API's 400 instead, without
 * consuming the queue (see history-rules.ts).
 */
export const VENDOR_FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'vendor');

export function fixture(relative: string): string {
  return readFileSync(join(VENDOR_FIXTURES, relative), 'utf8');
}

export interface StreamTiming {
  /** Bytes per write (default 48): pieces split events, JSON and UTF-8 sequences. */
  readonly chunkBytes?: number;
  /** Pause between writes (default 0: setImmediate). */
  readonly chunkDelayMs?: number;
  /** Delay before the status line and headers are sent. */
  readonly firstByteDelayMs?: number;
}

export type ScriptedResponse =
  | ({ readonly kind: 'sse'; readonly body: string; readonly headers?: Record<string, string> } & StreamTiming & {
      /** Destroy the socket after this many body bytes. */
      readonly hangUpAfterBytes?: number;
      /** Stop writing (keep the connection open) after this many body bytes. */
      readonly stallAfterBytes?: number;
    })
  | {
      readonly kind: 'json';
      readonly status: number;
      readonly body: unknown;
      readonly headers?: Record<string, string>;
      readonly firstByteDelayMs?: number;
    }
  | { readonly kind: 'raw'; readonly status: number; readonly contentType: string; readonly body: string; readonly headers?: Record<string, string> }
  /** Destroy the socket without any response. */
  | { readonly kind: 'hangup' };

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: any;
  /** True once the client closed the connection before the response was complete. */
  clientClosedEarly: boolean;
  /** With `strictHistory`: why the history was refused (answered with a 400), else null. */
  rejected: string | null;
  /** Resolves when the response ended or the connection closed. */
  readonly done: Promise<void>;
  /** `performance.now()` when the request arrived. */
  readonly receivedAt: number;
}

export interface VendorServer {
  /** Base URL for the Anthropic SDK (`http://127.0.0.1:port`). */
  readonly anthropicURL: string;
  /** Base URL for the OpenAI SDK (`http://127.0.0.1:port/v1`). */
  readonly openaiURL: string;
  /** Base URL of Gemini's OpenAI-compatible endpoint (`http://127.0.0.1:port/v1beta/openai/`), answered like OpenAI's. */
  readonly geminiURL: string;
  readonly requests: RecordedRequest[];
  /** Append responses to the queue. */
  enqueue(...responses: ScriptedResponse[]): void;
  /** Responses not yet served. */
  pending(): number;
  close(): Promise<void>;
}

/** `retry-after-ms: 1` keeps the SDKs' retry backoff tiny. */
export const FAST_RETRY = { 'retry-after-ms': '1' } as const;

export function sse(body: string, timing: StreamTiming & { hangUpAfterBytes?: number; stallAfterBytes?: number } = {}): ScriptedResponse {
  return { kind: 'sse', body, ...timing };
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): ScriptedResponse {
  return { kind: 'json', status, body, headers: status >= 400 ? { ...FAST_RETRY, ...headers } : headers };
}

/** Build an SSE body: Anthropic style with `event:` lines, OpenAI style without. */
export function sseOf(events: ReadonlyArray<{ event?: string; data: unknown }>): string {
  return events
    .map((e) => `${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`)
    .join('');
}

const sleep = (ms: number): Promise<void> => new Promise((r) => (ms > 0 ? setTimeout(r, ms) : setImmediate(r)));

/** The first-byte delay: `ms`, or until the client hangs up (a long delay ends with the client, not the test). */
function firstByteDelay(ms: number, res: ServerResponse): Promise<void> {
  if (ms <= 0 || res.destroyed) return sleep(0);
  return new Promise((r) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      res.off('close', done);
      r();
    }
    res.on('close', done);
  });
}

export async function startVendorServer(
  options: {
    fallback?: ScriptedResponse;
    strictHistory?: boolean;
    /** Answers a request by its content before the queue is consulted (undefined: the queue answers). */
    route?: (body: any) => ScriptedResponse | undefined;
  } = {},
): Promise<VendorServer> {
  const queue: ScriptedResponse[] = [];
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const fallback: ScriptedResponse =
    options.fallback ?? { kind: 'json', status: 500, body: { error: { type: 'test_error', message: 'vendor-server: no scripted response left' } }, headers: { 'x-should-retry': 'false' } };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try { body = text ? JSON.parse(text) : undefined; } catch { /* keep the text */ }
      let resolveDone!: () => void;
      const record: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        clientClosedEarly: false,
        rejected: null,
        done: new Promise<void>((r) => (resolveDone = r)),
        receivedAt: performance.now(),
      };
      requests.push(record);
      res.on('close', () => {
        if (!res.writableFinished) record.clientClosedEarly = true;
        resolveDone();
      });
      const vendor = req.url?.endsWith('/v1/messages') ? 'anthropic' : req.url?.endsWith('/v1/chat/completions') || req.url?.endsWith('/v1beta/openai/chat/completions') ? 'openai' : null;
      const invalid =
        options.strictHistory && vendor
          ? vendor === 'anthropic'
            ? anthropicHistoryError(body as Record<string, unknown>) ?? anthropicToolsError(body as Record<string, unknown>)
            : openaiHistoryError(body as Record<string, unknown>) ?? openaiToolsError(body as Record<string, unknown>)
          : null;
      record.rejected = invalid;
      const scripted: ScriptedResponse = !vendor
        ? { kind: 'json', status: 404, body: { error: { message: `no route ${req.url}` } } }
        : invalid
          ? { kind: 'json', status: 400, body: invalidRequestBody(vendor, invalid) }
          : options.route?.(body) ?? queue.shift() ?? fallback;
      void respond(scripted, req, res).catch(() => res.destroy());
    });
  });
  server.on('connection', (s) => {
    s.setNoDelay(true);
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;

  return {
    anthropicURL: `http://127.0.0.1:${port}`,
    openaiURL: `http://127.0.0.1:${port}/v1`,
    geminiURL: `http://127.0.0.1:${port}/v1beta/openai/`,
    requests,
    enqueue: (...r) => void queue.push(...r),
    pending: () => queue.length,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

async function respond(r: ScriptedResponse, req: IncomingMessage, res: ServerResponse): Promise<void> {
  switch (r.kind) {
    case 'hangup':
      req.socket.destroy();
      return;
    case 'json': {
      await firstByteDelay(r.firstByteDelayMs ?? 0, res);
      if (res.destroyed) return;
      const text = typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
      res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
      res.end(text);
      return;
    }
    case 'raw':
      res.writeHead(r.status, { 'content-type': r.contentType, ...r.headers });
      res.end(r.body);
      return;
    case 'sse': {
      await firstByteDelay(r.firstByteDelayMs ?? 0, res);
      if (res.destroyed) return;
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...r.headers });
      res.flushHeaders();
      const bytes = Buffer.from(r.body, 'utf8');
      const step = Math.max(1, r.chunkBytes ?? 48);
      const limit = Math.min(bytes.length, r.hangUpAfterBytes ?? Infinity, r.stallAfterBytes ?? Infinity);
      for (let at = 0; at < limit; at += step) {
        if (res.destroyed) return;
        res.write(bytes.subarray(at, Math.min(at + step, limit)));
        await sleep(r.chunkDelayMs ?? 0);
      }
      if (r.hangUpAfterBytes !== undefined && r.hangUpAfterBytes < bytes.length) {
        req.socket.destroy();
        return;
      }
      if (r.stallAfterBytes !== undefined && r.stallAfterBytes < bytes.length) return; // never ends
      res.end();
      return;
    }
    default: {
      const never: never = r;
      throw new Error(`unknown response ${JSON.stringify(never)}`);
    }
  }
}
