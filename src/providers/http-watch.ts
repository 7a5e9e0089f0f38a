/**
 * A per-request `fetch` wrapper given to an SDK client built with `maxRetries: 0`. It makes
 * every HTTP attempt of the request itself, to:
 * - retry a connection error or a retryable status (408, 409, 429, 5xx; `x-should-retry`
 *   wins) up to `maxRetries` times, each announced through `onNotice`
 *   ("anthropic: retrying (1/2) after 529 overloaded"), after the server's `retry-after-ms`/
 *   `retry-after`, else a backoff of 0.5 s doubling to 8 s minus up to 25 % jitter, waited out
 *   abortably. A server asking for more than `maxRetryWaitMs` is not retried;
 * - enforce an idle timeout: no bytes (headers or body) for `idleTimeoutMs` while an attempt
 *   is in flight aborts the request (`signal`), and `idleFired` tells the caller why; the timer
 *   is off while waiting to retry;
 * - remember the first bytes of a 200 that is not an event stream, for a readable error.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { GATHER_MS, createNodeFetch, gathersAtSocket } from './node-fetch';

export type VendorId = 'anthropic' | 'openai' | 'gemini';

export interface HttpWatchOptions {
  readonly vendor: VendorId;
  readonly maxRetries: number;
  readonly idleTimeoutMs: number;
  /** The caller's signal: aborting it aborts the request at once. */
  readonly signal: AbortSignal;
  readonly baseFetch?: typeof fetch;
  readonly onNotice?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Longest server-requested wait that is still retried (default 60 s). */
  readonly maxRetryWaitMs?: number;
}

export interface HttpWatch {
  /** Give to the SDK client as its `fetch`. */
  readonly fetch: typeof fetch;
  /** Give to the SDK request: aborted by the caller's signal or by the idle timeout. */
  readonly signal: AbortSignal;
  readonly idleFired: () => boolean;
  /** Content type and first bytes of a 2xx body that was not `text/event-stream`, if any. */
  readonly nonStream: () => { contentType: string; head: string } | null;
  /** Retries announced so far. */
  readonly retries: () => number;
  /** The wait a server asked for when it was too long to retry, else null. */
  readonly refusedWaitMs: () => number | null;
  /** Stop the timer and detach from the caller's signal. Idempotent. */
  dispose(): void;
}

const STATUS_LABELS: Record<number, string> = {
  408: 'request timeout',
  409: 'conflict',
  429: 'rate limited',
  500: 'server error',
  502: 'bad gateway',
  503: 'service unavailable',
  504: 'gateway timeout',
  529: 'overloaded',
};

export function statusLabel(status: number): string {
  return STATUS_LABELS[status] ?? (status >= 500 ? 'server error' : 'error');
}

/** Whether a non-2xx response is worth another attempt: the vendors' rule (their `x-should-retry` header wins). */
export function isRetryable(status: number, headers: Headers): boolean {
  const header = headers.get('x-should-retry');
  if (header === 'true') return true;
  if (header === 'false') return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** The delay a response asks for (`retry-after-ms`, then `retry-after` in seconds or as a date), or null. */
export function requestedWaitMs(headers: Headers, now = Date.now()): number | null {
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms > 0) return ms;
  const raw = headers.get('retry-after');
  if (!raw) return null;
  const secs = Number.parseFloat(raw);
  if (Number.isFinite(secs)) return secs > 0 ? secs * 1000 : null;
  const at = Date.parse(raw) - now;
  return Number.isFinite(at) && at > 0 ? at : null;
}

/** The SDKs' default backoff before retry number `attempt + 1`. */
export function defaultBackoffMs(attempt: number, random = Math.random): number {
  return Math.min(0.5 * 2 ** attempt, 8) * (1 - random() * 0.25) * 1000;
}

/** Settled: loses a race only to a read that had its data already. */
const NOTHING_YET: Promise<null> = Promise.resolve(null);

function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const part of parts) size += part.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

export function createHttpWatch(options: HttpWatchOptions): HttpWatch {
  const { vendor, maxRetries, idleTimeoutMs, onNotice } = options;
  const baseFetch = options.baseFetch ?? defaultFetch();
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let fired = false;
  let announced = 0;
  let refused: number | null = null;
  const maxRetryWaitMs = options.maxRetryWaitMs ?? 60_000;
  let nonStream: { contentType: string; head: string } | null = null;

  const onCallerAbort = (): void => controller.abort(options.signal.reason);
  if (options.signal.aborted) controller.abort(options.signal.reason);
  else options.signal.addEventListener('abort', onCallerAbort, { once: true });

  const disarm = (): void => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
  /**
   * Data seen: the idle deadline moves. A chunk only records its time (a streamed delta arrives
   * every few ms; re-creating a timer per chunk was a visible share of a delta's cost, see
   * docs/streaming.md); the one timer, when it fires, waits again for what is left.
   */
  let lastData = 0;
  const expire = (): void => {
    const left = lastData + idleTimeoutMs - performance.now();
    if (left > 1) {
      timer = setTimeout(expire, left);
      return;
    }
    timer = null;
    fired = true;
    controller.abort(new Error('idle timeout'));
  };
  const touch = (): void => {
    if (controller.signal.aborted) return disarm();
    lastData = performance.now();
    timer ??= setTimeout(expire, idleTimeoutMs);
  };
  const announce = (attempt: number, why: string, waitMs: number): void => {
    announced = attempt + 1;
    const wait = waitMs >= 1_000 ? `, waiting ${Number((waitMs / 1000).toPrecision(2))} s` : '';
    onNotice?.('warn', `${vendor}: retrying (${attempt + 1}/${maxRetries}) after ${why}${wait}`);
  };

  /**
   * The one retry loop: the SDK clients are built with `maxRetries: 0`, so every attempt is
   * made here. A retryable failure is announced, its delay waited out abortably, and the same
   * request sent again; the last answer (or one whose requested wait is too long) goes to the
   * SDK as it came.
   */
  const watchedFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    // A streamed request body cannot be sent twice (the SDKs send strings).
    const resendable = init?.body === undefined || init.body === null || typeof init.body === 'string';
    for (let attempt = 0; ; attempt++) {
      const canRetry = resendable && attempt < maxRetries;
      touch();
      let response: Response;
      try {
        response = await baseFetch(input, init);
      } catch (error) {
        disarm();
        if (!canRetry || controller.signal.aborted) throw error;
        const wait = defaultBackoffMs(attempt);
        announce(attempt, `connection error (${causeOf(error)})`, wait);
        await sleep(wait, undefined, { signal: controller.signal });
        continue;
      }
      if (!response.ok) {
        disarm();
        if (!canRetry || !isRetryable(response.status, response.headers) || controller.signal.aborted) return response;
        const asked = requestedWaitMs(response.headers);
        if (asked !== null && asked > maxRetryWaitMs) {
          refused = asked;
          return response;
        }
        const wait = asked ?? defaultBackoffMs(attempt);
        announce(attempt, `${response.status} ${statusLabel(response.status)}`, wait);
        await response.body?.cancel().catch(() => undefined);
        await sleep(wait, undefined, { signal: controller.signal });
        continue;
      }
      return watchBody(response);
    }
  };

  /** The response as the SDK reads it: its body fed through the idle watch (and gathered, for a stream). */
  const watchBody = (response: Response): Response => {
    const contentType = response.headers.get('content-type') ?? '';
    const isStream = contentType.includes('text/event-stream');
    // The node fetch already gathers an event stream's packets at its socket: no second window.
    const gather = isStream && !gathersAtSocket(response);
    if (!response.body) {
      disarm();
      return response;
    }
    touch();
    let head = '';
    const decoder = new TextDecoder();
    // A pull stream over the body's reader (not pipeThrough a TransformStream: that pipe costs
    // several promises per chunk). An event stream's chunks that arrive within GATHER_MS of
    // the first are handed on as one: a model streams a delta per network packet, and each
    // chunk costs the SDK a read and a decode (docs/streaming.md); the text shows at most
    // GATHER_MS later, under one streamed frame (the TUI draws a stream at ui.maxFps, 30/s).
    const reader = response.body.getReader();
    let pending: Promise<ReadableStreamReadResult<Uint8Array>> | null = null;
    /** The read in flight (kept across pulls when a window ended first). */
    const nextRead = (): Promise<ReadableStreamReadResult<Uint8Array>> => {
      if (!pending) {
        pending = reader.read();
        pending.catch(() => undefined); // awaited by a later pull, or dropped on cancel
      }
      return pending;
    };
    /** A read that failed after part of a window was gathered: raised by the next pull. */
    let failure: { error: unknown } | null = null;
    const body = new ReadableStream<Uint8Array>({
      async pull(ctrl) {
        if (failure) throw failure.error;
        const first = await nextRead();
        pending = null;
        if (first.done) {
          disarm();
          ctrl.close();
          return;
        }
        touch();
        if (!gather) {
          if (!isStream && head.length < 200) {
            head += decoder.decode(first.value, { stream: true });
            nonStream = { contentType: contentType || '(none)', head: head.slice(0, 200) };
          }
          ctrl.enqueue(first.value);
          return;
        }
        const parts = [first.value];
        let ended = false;
        // Wait out the window with no read pending (chunks queue in the body stream, cheaply),
        // then take what is queued without waiting for more.
        await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
        try {
          for (;;) {
            const read = await Promise.race([nextRead(), NOTHING_YET]);
            if (read === null) break; // the read stays pending for the next pull
            pending = null;
            if (read.done) {
              ended = true;
              break;
            }
            touch();
            parts.push(read.value);
          }
        } catch (error) {
          pending = null;
          failure = { error };
        }
        ctrl.enqueue(parts.length === 1 ? parts[0]! : concatBytes(parts));
        if (ended) {
          disarm();
          ctrl.close();
        }
      },
      cancel(reason) {
        disarm();
        return reader.cancel(reason);
      },
    });
    if (!isStream) nonStream = { contentType: contentType || '(none)', head: '' };
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };

  return {
    fetch: watchedFetch as typeof fetch,
    signal: controller.signal,
    idleFired: () => fired,
    nonStream: () => nonStream,
    retries: () => announced,
    refusedWaitMs: () => refused,
    dispose() {
      disarm();
      options.signal.removeEventListener('abort', onCallerAbort);
    },
  };
}

let nodeFetch: typeof fetch | undefined;
/**
 * The fetch an SDK gets unless one is passed in: node:http(s) (node-fetch.ts, docs/streaming.md),
 * one per process (its keep-alive agents are shared); `LEGION_FETCH=builtin` uses Node's own fetch.
 */
function defaultFetch(): typeof fetch {
  if (process.env.LEGION_FETCH === 'builtin') return globalThis.fetch;
  nodeFetch ??= createNodeFetch();
  return nodeFetch;
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause;
  const source = cause instanceof Error ? cause : error;
  const code = (source as { code?: unknown })?.code;
  if (typeof code === 'string') return code;
  return source instanceof Error ? source.message : String(source);
}

