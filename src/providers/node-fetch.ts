import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { httpModules } from './http-modules';

/**
 * How long an event stream's packets are gathered into one chunk: 16 ms costs a fifth less CPU
 * per delta than 8 ms (docs/streaming.md) and is still under a frame (the TUI draws at 30/s).
 */
export const GATHER_MS = 16;

/** Responses of this fetch whose event-stream body is already gathered at the socket (see `webBody`). */
const socketGathered = new WeakSet<Response>();

/** Whether `response` came from a node fetch that gathers its event stream at the socket (http-watch then does not). */
export function gathersAtSocket(response: Response): boolean {
  return socketGathered.has(response);
}

/**
 * The `fetch` the provider SDKs get (docs/streaming.md): node:http(s) instead of Node's
 * built-in fetch (undici). A streamed model answer arrives as one small packet per delta; per
 * packet undici parses HTTP in WebAssembly and enqueues into a web stream (promises, a read
 * request each), which was a visible share of a delta's CPU. Here a packet is parsed by Node's
 * native HTTP parser into a plain Node stream, and the web body stream the SDK reads is fed on
 * demand with everything that arrived since its last read, as one chunk.
 *
 * What the SDKs use is supported: a URL string or URL, method, headers, a string or byte body,
 * an abort signal; gzip/deflate/br responses are decompressed as fetch does. Anything else
 * (a `Request` object, a stream or form body) goes to the built-in fetch. Failures look like
 * fetch's: `TypeError('fetch failed')` before the response, `TypeError('terminated')` during
 * the body, each with the system error as its `cause`; an abort rejects with an `AbortError`.
 */
export function createNodeFetch(options: { readonly fallback?: typeof fetch; readonly gatherMs?: number } = {}): typeof fetch {
  const fallback = options.fallback ?? globalThis.fetch;
  const gatherMs = options.gatherMs ?? GATHER_MS;
  const { http, https } = httpModules();
  const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  const nodeFetch = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const body = init.body;
    const simpleBody = body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array || body instanceof ArrayBuffer;
    if (input instanceof Request || !simpleBody) return fallback(input, init);
    const url = new URL(String(input));
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return fallback(input, init);
    const signal = init.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const headers = new Headers(init.headers);
    if (!headers.has('accept-encoding')) headers.set('accept-encoding', 'gzip, deflate, br');
    const payload = body === undefined || body === null ? undefined : typeof body === 'string' ? Buffer.from(body) : body instanceof ArrayBuffer ? Buffer.from(body) : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    if (payload && !headers.has('content-length')) headers.set('content-length', String(payload.length));
    const outgoing: Record<string, string> = {};
    headers.forEach((value, key) => { outgoing[key] = value; });

    return new Promise<Response>((resolve, reject) => {
      const secure = url.protocol === 'https:';
      const req = (secure ? https.request : http.request)(url, { method: init.method ?? 'GET', headers: outgoing, agent: secure ? agents.https : agents.http });
      let settled = false;
      let body: Readable | undefined;
      const onAbort = (): void => {
        const error = abortError(signal!);
        if (!settled) {
          settled = true;
          reject(error);
        }
        const cause = error instanceof Error ? error : new Error(String(error));
        req.destroy(cause);
        body?.destroy(cause);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const detach = (): void => signal?.removeEventListener('abort', onAbort);
      req.on('error', (error) => {
        if (settled) return;
        settled = true;
        detach();
        reject(new TypeError('fetch failed', { cause: error }));
      });
      req.on('response', (res: IncomingMessage) => {
        settled = true;
        const responseHeaders = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) responseHeaders.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
        const status = res.statusCode ?? 0;
        const empty = status === 204 || status === 304 || (init.method ?? 'GET').toUpperCase() === 'HEAD';
        if (empty) {
          res.resume();
          res.on('end', detach);
          resolve(new Response(null, { status, statusText: res.statusMessage ?? '', headers: responseHeaders }));
          return;
        }
        body = decoded(res, responseHeaders.get('content-encoding'));
        body.on('close', detach);
        const eventStream = (responseHeaders.get('content-type') ?? '').includes('text/event-stream');
        const hold = eventStream && gatherMs > 0 ? socketHold(res, gatherMs) : undefined;
        const stream = webBody(body, signal, () => req.destroy(), hold);
        const response = new Response(stream, { status, statusText: res.statusMessage ?? '', headers: responseHeaders });
        if (hold) socketGathered.add(response);
        resolve(response);
      });
      req.end(payload);
    });
  };
  return nodeFetch as typeof fetch;
}

/** The response body as sent, decompressed when it is gzip, deflate or br (errors carried over). */
function decoded(res: IncomingMessage, encoding: string | null): Readable {
  const codec = encoding?.trim().toLowerCase();
  const { zlib } = httpModules();
  const inflate = codec === 'gzip' || codec === 'x-gzip' ? zlib.createGunzip() : codec === 'deflate' ? zlib.createInflate() : codec === 'br' ? zlib.createBrotliDecompress() : undefined;
  if (!inflate) return res;
  res.on('error', (error) => inflate.destroy(error));
  res.on('aborted', () => inflate.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })));
  return res.pipe(inflate);
}

/** What `socketHold` needs of a socket's libuv handle (net.Socket's `_handle`; checked before use). */
interface ReadHandle { reading: boolean; readStop(): number; readStart(): number }

/** A socket hold (`socketHold`): started when a chunk is handed on, over `ms` later or when the response closes. */
interface Hold {
  start(): void;
  /** Resolves when the hold is over; null when none is on. */
  over(): Promise<void> | null;
}

/**
 * Stop reading the response's socket for `ms` after a chunk was handed on: the packets that
 * arrive meanwhile wait in the kernel's socket buffer and are then read, parsed and pushed as
 * one, instead of a wake-up, a read system call, an HTTP parse and a stream push per packet (a
 * model streams a delta per packet, ~1 ms apart). `socket.pause()` would not do: it stops the
 * 'data' events, not the reads. So this does what net.Socket's own `pause` does for a socket
 * with an `onread` buffer (the handle's `readStop`, its `reading` flag cleared), and its
 * `_read` starts reading again at the release (until then a stream asking for more does not).
 * Only when the handle has that shape (else no hold: packets are read as they come, as
 * before); not once the message is complete (the socket goes back to the keep-alive pool).
 * A socket not read does not keep the process up, so the timer does (a process whose only work
 * is this body would otherwise exit mid-stream); the response closing (an abort) releases at once.
 */
function socketHold(res: IncomingMessage, ms: number): Hold {
  let held: (Socket & Reader) | null = null;
  let over: Promise<void> | null = null;
  let done: (() => void) | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const release = (): void => {
    const socket = held;
    held = null;
    if (timer) clearTimeout(timer);
    timer = null;
    over = null;
    done?.();
    done = null;
    if (!socket) return;
    delete (socket as Partial<Reader>)._read; // the prototype's again
    const handle = readHandle(socket);
    if (!handle || socket.destroyed || handle.reading) return;
    socket._read(0);
    // Fail safe where net.Socket's `_read` did not start the handle again (another Node's
    // internals): start it here, as its `tryReadStart` does, rather than leave the body hanging.
    if (handle.reading || socket.destroyed) return;
    handle.reading = true;
    const failed = handle.readStart();
    if (failed !== 0) socket.destroy(Object.assign(new Error(`read start failed (${failed})`), { errno: failed }));
  };
  res.once('close', release);
  return {
    over: () => over,
    start() {
      const socket = res.socket as (Socket & Reader) | null;
      if (held || res.complete || !socket || socket.destroyed || socket.connecting || Object.hasOwn(socket, '_read')) return;
      const handle = readHandle(socket);
      if (!handle || !handle.reading) return;
      handle.reading = false;
      if (handle.readStop() !== 0) {
        handle.reading = true;
        return;
      }
      held = socket;
      socket._read = () => undefined;
      over = new Promise<void>((resolve) => { done = resolve; });
      timer = setTimeout(release, ms);
    },
  };
}

/** net.Socket's `_read` (Readable's hook; starts the handle reading when it is not). */
interface Reader { _read(n: number): void }

function readHandle(socket: Socket): ReadHandle | null {
  const handle = (socket as unknown as { _handle?: Partial<ReadHandle> | null })._handle;
  if (!handle || typeof handle.readStop !== 'function' || typeof handle.readStart !== 'function' || typeof handle.reading !== 'boolean') return null;
  return handle as ReadHandle;
}

/**
 * A web stream over a Node stream, fed only when read: each read takes everything buffered
 * since the last one as one chunk (no web-stream work per network packet), or waits for data.
 * With a `hold` (an event stream): a chunk is handed on no sooner than the hold after the last
 * is over, and when data arrives the rest of the same read is let in first (a TLS socket pushes
 * each record of a read on its own), so a window's packets are one chunk.
 */
function webBody(source: Readable, signal: AbortSignal | undefined, destroy: () => void, hold?: Hold): ReadableStream<Uint8Array> {
  let ended = false;
  let failed: unknown;
  let wake: (() => void) | null = null;
  const poke = (): void => {
    const resume = wake;
    wake = null;
    resume?.();
  };
  source.on('readable', poke);
  source.on('end', () => {
    ended = true;
    poke();
  });
  source.on('error', (error) => {
    failed ??= error;
    poke();
  });
  // A response cut before its end (the server closed the socket mid-body).
  source.on('aborted', () => {
    failed ??= Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
    poke();
  });
  return new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      for (;;) {
        const held = hold?.over();
        if (held) await held;
        const parts: Buffer[] = [];
        let chunk: Buffer | null;
        while ((chunk = source.read() as Buffer | null) !== null) parts.push(chunk);
        if (parts.length > 0) {
          ctrl.enqueue(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
          hold?.start();
          return;
        }
        if (failed !== undefined) throw signal?.aborted ? abortError(signal) : new TypeError('terminated', { cause: failed });
        if (ended) {
          ctrl.close();
          return;
        }
        await new Promise<void>((resolve) => { wake = resolve; });
        if (hold) await new Promise<void>((resolve) => setImmediate(resolve));
      }
    },
    cancel() {
      source.destroy();
      destroy();
    },
  }, { highWaterMark: 0 });
}

/** What fetch rejects with on an abort: the signal's reason, as undici does. */
function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}
