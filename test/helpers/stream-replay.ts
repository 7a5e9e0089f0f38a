import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { fixture } from './vendor-server';

/**
 * A vendor stream replayed at a fixed rate, for the streaming benchmark (test/bench/stream-sdk.ts):
 * the recorded text stream of the vendor (test/fixtures/vendor/<vendor>/text-stream.sse) with its
 * text deltas replaced by `deltas` one-character deltas, one SSE event per write, `intervalMs`
 * apart. The events around the deltas (message start, block start/stop, usage, stop) are the
 * recording's own. Any POST gets the stream (the SDKs post to /v1/messages and
 * /v1/chat/completions).
 */
export type Vendor = 'anthropic' | 'openai';

export interface ReplaySpec {
  readonly vendor: Vendor;
  readonly deltas: number;
  readonly intervalMs: number;
}

/** Prose-like text: words, a paragraph break every ~400 characters. */
const TEXT = 'The quick brown fox jumps over the lazy dog while the `agent` writes **markdown** and lists. ';

function charAt(i: number): string {
  return i % 400 === 399 ? '\n' : TEXT[i % TEXT.length]!;
}

/** The recording split into events (each ends with a blank line). */
function eventsOf(body: string): string[] {
  return body.split('\n\n').filter((e) => e.trim() !== '').map((e) => `${e}\n\n`);
}

/** The SSE events of one replayed stream. */
export function replayEvents(spec: ReplaySpec): string[] {
  const events = eventsOf(fixture(`${spec.vendor}/text-stream.sse`));
  const isDelta = (event: string): boolean => {
    const data = event.split('\n').find((l) => l.startsWith('data: '))?.slice(6);
    if (!data || data === '[DONE]') return false;
    const parsed = JSON.parse(data) as { delta?: { type?: string }; choices?: { delta?: { content?: string } }[] };
    return spec.vendor === 'anthropic' ? parsed.delta?.type === 'text_delta' : typeof parsed.choices?.[0]?.delta?.content === 'string' && parsed.choices[0].delta.content !== '';
  };
  const first = events.findIndex(isDelta);
  const last = events.length - 1 - [...events].reverse().findIndex(isDelta);
  if (first === -1) throw new Error(`no text delta in the ${spec.vendor} recording`);
  const template = events[first]!;
  const field = spec.vendor === 'anthropic' ? /("text":\s*)"(?:[^"\\]|\\.)*"/ : /("content":\s*)"(?:[^"\\]|\\.)*"/;
  const deltas = Array.from({ length: spec.deltas }, (_, i) => template.replace(field, (_m, key: string) => `${key}${JSON.stringify(charAt(i))}`));
  return [...events.slice(0, first), ...deltas, ...events.slice(last + 1)];
}

/** The text the replayed stream spells. */
export function replayText(deltas: number): string {
  let out = '';
  for (let i = 0; i < deltas; i++) out += charAt(i);
  return out;
}

export interface ReplayServer {
  readonly port: number;
  readonly anthropicURL: string;
  readonly openaiURL: string;
  /** Streams served so far (started). */
  served(): number;
  close(): Promise<void>;
}

/** Serve `replayEvents(spec)` to every POST, paced. */
export async function startReplayServer(spec: ReplaySpec): Promise<ReplayServer> {
  const events = replayEvents(spec);
  const sockets = new Set<Socket>();
  let served = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      served += 1;
      res.socket?.setNoDelay(true);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_${served}` });
      let i = 0;
      const next = (): void => {
        if (res.destroyed) return;
        if (i >= events.length) {
          res.end();
          return;
        }
        res.write(events[i++]!);
        setTimeout(next, spec.intervalMs);
      };
      next();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    anthropicURL: `http://127.0.0.1:${port}`,
    openaiURL: `http://127.0.0.1:${port}/v1`,
    served: () => served,
    close: () => new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}
