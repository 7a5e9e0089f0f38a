import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { httpModules } from './http-modules';

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
export function createNodeFetch(options: { readonly fallback?: typeof fetch } = {}): typeof fetch {
  const fallback = options.fallback ?? globalThis.fetch;
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
        const stream = webBody(body, signal, () => req.destroy());
        resolve(new Response(stream, { status, statusText: res.statusMessage ?? '', headers: responseHeaders }));
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

/**
 * A web stream over a Node stream, fed only when read: each read takes everything buffered
 * since the last one as one chunk (no web-stream work per network packet), or waits for data.
 */
function webBody(source: Readable, signal: AbortSignal | undefined, destroy: () => void): ReadableStream<Uint8Array> {
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
        const parts: Buffer[] = [];
        let chunk: Buffer | null;
        while ((chunk = source.read() as Buffer | null) !== null) parts.push(chunk);
        if (parts.length > 0) {
          ctrl.enqueue(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
          return;
        }
        if (failed !== undefined) throw signal?.aborted ? abortError(signal) : new TypeError('terminated', { cause: failed });
        if (ended) {
          ctrl.close();
          return;
        }
        await new Promise<void>((resolve) => { wake = resolve; });
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
