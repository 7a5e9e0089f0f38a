import { createServer, type Server, type Socket } from 'node:net';
import { chmodSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import type { LegionEvent } from '../events/types';
import { messageOf } from '../errors';
import { createLineReader } from './line-reader';
import { createEventRing } from './event-ring';
import { createDispatch } from './methods';
import { METHOD_TABLE, type MethodTable, type Served } from './method-table';
import { line, MAX_CLIENT_LINE_BYTES, parseClientLine, PROTOCOL_VERSION, type WireError } from './protocol';
import { removeSocket } from './discovery';

/** Limits of the server (docs/serve.md#limits). */
export interface ServerLimits {
  /**
   * A client with more than this many bytes queued that has not taken any of its data for
   * `stallMs` counts as not reading and is cut off (a burst a reading client drains is fine).
   */
  readonly maxClientBuffer: number;
  readonly stallMs: number;
  /** Cut off at once past this many bytes queued, reading or not. */
  readonly hardClientBuffer: number;
  /**
   * The event ring (for `since` on re-attach): at most this many events, and this many
   * characters of their serialized lines (≈ bytes: one per character of Latin-1 text, two of
   * others). 4 MB holds minutes of a busy collective's events, far beyond a reconnect's
   * seconds; a larger ring only fills the server's memory over a day (docs/serve.md#limits).
   */
  readonly ringEvents: number;
  readonly ringBytes: number;
  readonly maxClients: number;
  /** Requests of one client still unanswered (`idle` waits) before more are refused. */
  readonly maxPendingPerClient: number;
  /** A connection that has not said hello this long after connecting is closed (it would hold one of `maxClients`). */
  readonly helloMs: number;
}

export const DEFAULT_LIMITS: ServerLimits = {
  maxClientBuffer: 8 * 1024 * 1024, stallMs: 10_000, hardClientBuffer: 128 * 1024 * 1024, ringEvents: 20_000, ringBytes: 4 * 1024 * 1024, maxClients: 64, maxPendingPerClient: 256, helloMs: 10_000,
};

/** `core`, `history`, `workflows`: what it serves (method-table.ts `Served`). */
export interface ServerOptions extends Served {
  readonly socketPath: string;
  readonly workspace: string;
  readonly version: string;
  readonly log: (line: string) => void;
  readonly limits?: Partial<ServerLimits>;
  /** Told to every client in its welcome, for its status bar. */
  readonly providerLabel?: string;
  readonly demo?: boolean;
  /** The untrusted-workspace warning of the served workspace, told to every client in its welcome (its trust as the server computed it at start). */
  readonly untrusted?: string;
  /** The methods it serves: METHOD_TABLE (method-table.ts) unless a test extends it. */
  readonly methods?: MethodTable;
}

export interface LegionServer {
  readonly socketPath: string;
  clientCount(): number;
  /** Say bye to every client, stop listening, remove the socket. The core is not touched. Idempotent. */
  close(reason: string): Promise<void>;
}

interface Client {
  readonly socket: Socket;
  readonly label: string;
  live: boolean;
  closed: boolean;
  pending: number;
  /** When its output last had to wait (null: the socket has drained since). */
  blockedSince: number | null;
}

/** How long a socket being closed by the server has to take its last line before it is destroyed regardless. */
const CLOSE_GRACE_MS = 1000;

/**
 * Close a socket from the server's side: its last line (if any) goes out, then the socket is
 * destroyed — as soon as the line is flushed, and after CLOSE_GRACE_MS whatever happened. A
 * socket whose peer never reads would never flush (so `end()`'s callback alone would keep it,
 * and its place, forever), and one whose peer never closes would hold `server.close`
 * (`legion stop`) open.
 */
function closeSocket(socket: Socket, lastLine?: string): void {
  const destroy = (): void => void socket.destroy();
  if (lastLine === undefined) socket.end(destroy);
  else socket.end(lastLine, destroy);
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}

/**
 * Serve `core` on a Unix socket (mode 0600) with the protocol of protocol.ts. Every event of
 * the core's bus is serialized once, kept in a bounded ring (for `since`) and written to every
 * client that said hello. A client whose queued output passes `maxClientBuffer` is cut off;
 * nothing a client sends can throw out of here.
 */
export async function startServer(options: ServerOptions): Promise<LegionServer> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const { core, log } = options;
  const table = options.methods ?? METHOD_TABLE;
  const dispatch = createDispatch({ core, history: options.history, workflows: options.workflows }, table);
  /** This start of the server (the welcome's `instance`): a client that comes back after a restart sees another one. */
  const instance = randomUUID();
  const ring = createEventRing({ maxEvents: limits.ringEvents, maxBytes: limits.ringBytes, lastSeq: core.bus.lastSeq() });
  const clients = new Set<Client>();
  let counter = 0;
  let closing: Promise<void> | undefined;

  const write = (client: Client, text: string): void => {
    if (client.closed) return;
    const queued = client.socket.writableLength;
    const stalled = client.blockedSince !== null && Date.now() - client.blockedSince >= limits.stallMs;
    if (queued > limits.hardClientBuffer || (queued > limits.maxClientBuffer && stalled)) {
      log(`${client.label}: cut off (not reading: ${queued} bytes queued)`);
      return drop(client);
    }
    // Lines written in the same tick (a burst of events) leave in one write.
    if (!client.socket.writableCorked) {
      client.socket.cork();
      process.nextTick(() => client.socket.uncork());
    }
    if (!client.socket.write(text) && client.blockedSince === null) client.blockedSince = Date.now();
  };
  const drop = (client: Client): void => {
    if (client.closed) return;
    client.closed = true;
    clients.delete(client);
    client.socket.destroy();
  };
  const fail = (client: Client, id: number | string | undefined, error: WireError): void =>
    write(client, line(id === undefined ? { error } : { id, error }));

  const unsubscribe = core.bus.subscribeAll((event: LegionEvent) => {
    const text = line({ event });
    ring.add(event.seq, text);
    for (const client of clients) if (client.live) write(client, text);
  });

  const onRequest = (client: Client, id: number | string, method: string, params: unknown): void => {
    if (client.pending >= limits.maxPendingPerClient) return fail(client, id, { kind: 'refused', message: `more than ${limits.maxPendingPerClient} requests waiting` });
    let result: unknown;
    try {
      result = dispatch(method, params);
    } catch (error) {
      return fail(client, id, { kind: 'failed', message: messageOf(error) });
    }
    if (!(result instanceof Promise)) return write(client, line({ id, result: result ?? null }));
    client.pending += 1;
    result.then(
      (value: unknown) => write(client, line({ id, result: value ?? null })),
      (error: unknown) => fail(client, id, { kind: 'failed', message: messageOf(error) }),
    ).finally(() => { client.pending -= 1; });
  };

  const onLine = (client: Client, text: string): void => {
    const parsed = parseClientLine(text, table);
    if (!parsed.ok) return fail(client, parsed.id, parsed.error);
    const message = parsed.message;
    if (message.kind === 'hello') {
      if (client.live) return fail(client, undefined, { kind: 'protocol', message: 'hello was already said' });
      if (message.hello.protocol !== PROTOCOL_VERSION) {
        fail(client, undefined, { kind: 'protocol', message: `this server speaks protocol ${PROTOCOL_VERSION}, not ${message.hello.protocol}` });
        client.socket.end();
        return;
      }
      const since = message.hello.since;
      const replay = since === undefined ? null : ring.after(since);
      write(client, line({
        welcome: {
          protocol: PROTOCOL_VERSION, runId: core.runId, workspace: options.workspace, pid: process.pid, instance, version: options.version,
          lastSeq: core.bus.lastSeq(), replay: replay ? 'since' : 'snapshot',
          ...(options.providerLabel !== undefined ? { providerLabel: options.providerLabel } : {}), ...(options.demo !== undefined ? { demo: options.demo } : {}),
          ...(options.untrusted !== undefined ? { untrusted: options.untrusted } : {}),
        },
      }));
      if (replay) for (const l of replay) write(client, l);
      client.live = true;
      log(`${client.label}: attached (${message.hello.client ?? 'client'}${since === undefined ? '' : `, since ${since}: ${replay ? `${replay.length} events replayed` : 'snapshot'}`})`);
      return;
    }
    if (!client.live) return fail(client, message.id, { kind: 'protocol', message: 'say hello first' });
    onRequest(client, message.id, message.method, message.params);
  };

  const onConnection = (socket: Socket): void => {
    const client: Client = { socket, label: `client ${++counter}`, live: false, closed: false, pending: 0, blockedSince: null };
    socket.on('error', () => drop(client));
    socket.on('drain', () => { client.blockedSince = null; });
    socket.on('close', () => {
      if (!client.closed && client.live) log(`${client.label}: detached`);
      drop(client);
    });
    if (closing || clients.size >= limits.maxClients) {
      // A refused socket is never read, so it would never see its peer's end: closed from here.
      closeSocket(socket, line({ error: { kind: 'refused', message: closing ? 'the server is stopping' : `more than ${limits.maxClients} clients` } }));
      return;
    }
    clients.add(client);
    const helloTimer = setTimeout(() => {
      if (client.live || client.closed) return;
      log(`${client.label}: closed (no hello within ${limits.helloMs} ms)`);
      fail(client, undefined, { kind: 'protocol', message: `no hello within ${limits.helloMs} ms` });
      // Its place is freed when the socket closes ('close' drops the client).
      closeSocket(client.socket);
    }, limits.helloMs);
    helloTimer.unref();
    socket.once('close', () => clearTimeout(helloTimer));
    const reader = createLineReader({
      maxBytes: MAX_CLIENT_LINE_BYTES,
      onLine: (text) => {
        try {
          onLine(client, text);
        } catch (error) {
          fail(client, undefined, { kind: 'failed', message: messageOf(error) });
        }
      },
      onOversize: (bytes) => fail(client, undefined, { kind: 'oversize', message: `a line of ${bytes} bytes (the limit is ${MAX_CLIENT_LINE_BYTES})` }),
    });
    socket.on('data', (chunk: Buffer) => reader.push(chunk));
  };

  const server: Server = createServer({ allowHalfOpen: false }, onConnection);
  removeSocket(options.socketPath);
  await listenPrivately(server, options.socketPath);
  log(`listening on ${options.socketPath}`);

  return {
    socketPath: options.socketPath,
    clientCount: () => clients.size,
    close(reason) {
      closing ??= (async () => {
        unsubscribe();
        const bye = line({ bye: { reason } });
        const sockets = [...clients].map((c) => c.socket);
        for (const client of [...clients]) {
          client.closed = true;
          client.socket.end(bye);
        }
        clients.clear();
        // A client that does not close its end is not waited for long.
        const force = setTimeout(() => { for (const s of sockets) s.destroy(); }, 1000);
        force.unref();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        clearTimeout(force);
        removeSocket(options.socketPath);
      })();
      return closing;
    },
  };
}

/** Listen with a umask that leaves the socket 0600 from its first moment, then make sure of it. */
async function listenPrivately(server: Server, path: string): Promise<void> {
  const previous = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(previous);
  }
  chmodSync(path, 0o600);
}
