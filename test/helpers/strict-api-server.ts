import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { anthropicHistoryError, invalidRequestBody } from './history-rules';
import { anthropicStream } from './vendor-streams';

/**
 * An Anthropic Messages API stand-in (`POST /v1/messages`, streaming) that refuses a history
 * the way the real API does: HTTP 400 `invalid_request_error` when the first message is not
 * `user`, roles do not alternate, a `tool_use` lacks its `tool_result` in the next message, a
 * `tool_result` has no matching `tool_use` in the previous message, or a block is empty (see
 * history-rules.ts). A valid request gets `reply(body)` (an SSE body), by default a short text.
 * Point the real provider at it with `ANTHROPIC_BASE_URL=<url>`.
 */
export interface StrictRequest {
  readonly body: any;
  readonly headers: IncomingMessage['headers'];
  /** Why the history was refused (answered 400), else null. */
  readonly rejected: string | null;
}

export interface StrictApiServer {
  readonly url: string;
  readonly requests: StrictRequest[];
  /** Requests answered 400. */
  rejected(): StrictRequest[];
  close(): Promise<void>;
}

export interface StrictApiOptions {
  /** The SSE body for a valid request (default: "ok, <n> messages seen"). */
  readonly reply?: (body: any, index: number) => string;
}

/** Role alternation, which `anthropicHistoryError` leaves out. */
export function alternationError(body: any): string | null {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  for (let i = 1; i < messages.length; i++) {
    if (messages[i].role === messages[i - 1].role) {
      return `messages.${i}: roles must alternate between "user" and "assistant", but found multiple "${messages[i].role}" roles in a row`;
    }
  }
  return null;
}

export function strictHistoryError(body: any): string | null {
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : [];
  if (messages.length > 0 && messages[0].role !== 'user') return 'messages: first message must use the "user" role';
  return anthropicHistoryError(body) ?? alternationError(body);
}

export async function startStrictApiServer(options: StrictApiOptions = {}): Promise<StrictApiServer> {
  const requests: StrictRequest[] = [];
  const sockets = new Set<Socket>();
  const reply = options.reply ?? ((body: any) => anthropicStream({ text: ['ok, ', `${body.messages.length} messages seen`] }));
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || !req.url?.endsWith('/v1/messages')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `no route ${req.url}` } }));
        return;
      }
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify(invalidRequestBody('anthropic', 'the request body is not valid JSON')));
        return;
      }
      const rejected = strictHistoryError(body);
      requests.push({ body, headers: req.headers, rejected });
      if (rejected) {
        res.writeHead(400, { 'content-type': 'application/json', 'x-should-retry': 'false' });
        res.end(JSON.stringify(invalidRequestBody('anthropic', rejected)));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.end(reply(body, requests.length - 1));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    rejected: () => requests.filter((r) => r.rejected !== null),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
