import { connect, type Socket } from 'node:net';
import type { LegionEvent } from '../events/types';
import { createLineReader } from './line-reader';
import { line, MAX_SERVER_LINE_BYTES, parseServerLine, PROTOCOL_VERSION, type Method, type ParamsOf, type Welcome, type WireError } from './protocol';

/** A request the server refused or could not answer (or the connection closed under it). */
export class RemoteError extends Error {
  constructor(readonly kind: WireError['kind'] | string, message: string) {
    super(message);
  }
}

export interface Connection {
  readonly welcome: Welcome;
  request<M extends Method>(method: M, params: ParamsOf<M>): Promise<unknown>;
  /** Close this client's end (the server and its agents go on). */
  close(): void;
  readonly isOpen: boolean;
}

export type CloseKind = 'lost' | 'bye' | 'broken';

export interface ConnectOptions {
  readonly socket: string;
  readonly since?: number;
  readonly client?: string;
  /** Every pushed event, in order; called from the first one after the welcome. */
  readonly onEvent: (event: LegionEvent) => void;
  /**
   * The connection ended: once, with the reason and how. `lost`: cut without a goodbye (a
   * killed server, a socket error, the client's own close); `bye`: the server said goodbye (it
   * is stopping); `broken`: the server broke the protocol (a line that does not parse would
   * come again with a replay: trying again is pointless).
   */
  readonly onClose?: (reason: string, how: CloseKind) => void;
  readonly timeoutMs?: number;
}

/**
 * A client of protocol.ts over the socket: says hello, waits for the welcome, then matches
 * results to requests by id and hands pushed events on. Every line is checked with zod
 * (`parseServerLine`); a bad one ends the connection (a server that speaks nonsense is not
 * trusted further).
 */
export function connectServer(options: ConnectOptions): Promise<Connection> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(options.socket);
    const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
    let nextId = 1;
    let welcome: Welcome | undefined;
    let open = true;
    let endReason: string | undefined;
    const timer = setTimeout(() => end(`no answer from ${options.socket}`), options.timeoutMs ?? 10_000);

    /** `graceful`: what this client wrote still reaches the server (its own close). */
    const end = (reason: string, graceful = false, how: CloseKind = 'lost'): void => {
      if (!open) return;
      open = false;
      endReason = reason;
      clearTimeout(timer);
      if (graceful) socket.end();
      else socket.destroy();
      for (const w of waiting.values()) w.reject(new RemoteError('closed', reason));
      waiting.clear();
      if (!welcome) reject(new RemoteError('closed', reason));
      else options.onClose?.(reason, how);
    };

    const onLine = (text: string): void => {
      const parsed = parseServerLine(text);
      if (!parsed.ok) return end(parsed.error, false, 'broken');
      const m = parsed.message;
      switch (m.kind) {
        case 'welcome':
          if (welcome) return end('the server said welcome twice', false, 'broken');
          welcome = m.welcome;
          clearTimeout(timer);
          resolve(connection);
          return;
        case 'event':
          if (welcome) options.onEvent(m.event);
          return;
        case 'bye':
          return end(m.reason, false, 'bye');
        case 'result':
        case 'error': {
          const id = typeof m.id === 'number' ? m.id : undefined;
          const w = id === undefined ? undefined : waiting.get(id);
          if (m.kind === 'error' && !w) {
            if (!welcome) return end(m.error.message);
            return;
          }
          if (!w) return;
          waiting.delete(id!);
          if (m.kind === 'result') w.resolve(m.result);
          else w.reject(new RemoteError(m.error.kind, m.error.message));
          return;
        }
      }
    };

    const reader = createLineReader({ maxBytes: MAX_SERVER_LINE_BYTES, onLine, onOversize: (n) => end(`the server sent a line of ${n} bytes`, false, 'broken') });
    socket.on('data', (chunk: Buffer) => reader.push(chunk));
    socket.on('error', (error) => end(error.message));
    socket.on('close', () => end(endReason ?? 'the server closed the connection'));
    socket.on('connect', () => {
      socket.write(line({ hello: { protocol: PROTOCOL_VERSION, ...(options.since !== undefined ? { since: options.since } : {}), ...(options.client ? { client: options.client } : {}) } }));
    });

    const connection: Connection = {
      get welcome() {
        return welcome!;
      },
      get isOpen() {
        return open;
      },
      request(method, params) {
        if (!open) return Promise.reject(new RemoteError('closed', endReason ?? 'not connected'));
        const id = nextId++;
        return new Promise((res, rej) => {
          waiting.set(id, { resolve: res, reject: rej });
          socket.write(line({ id, method, params }));
        });
      },
      close: () => end('closed by the client', true),
    };
  });
}
