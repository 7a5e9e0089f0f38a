/**
 * A per-request `fetch` wrapper given to an SDK client. It observes every HTTP attempt the
 * SDK makes (including its retries) to:
 * - report each retry the SDK is about to make through `onNotice`
 *   ("anthropic: retrying (1/2) after 529 overloaded"), using the SDKs' own retry rule;
 * - enforce an idle timeout: no bytes (headers or body) for `idleTimeoutMs` while an attempt
 *   is in flight aborts the request (`signal`), and `idleFired` tells the caller why;
 * - remember the first bytes of a 200 that is not an event stream, for a readable error.
 * The timer is disarmed while the SDK sleeps between retries (a long `retry-after` is not idle).
 */
export type VendorId = 'anthropic' | 'openai';

export interface HttpWatchOptions {
  readonly vendor: VendorId;
  readonly maxRetries: number;
  readonly idleTimeoutMs: number;
  /** The caller's signal: aborting it aborts the request at once. */
  readonly signal: AbortSignal;
  readonly baseFetch?: typeof fetch;
  readonly onNotice?: (level: 'info' | 'warn' | 'error', message: string) => void;
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

/** The retry rule both SDKs apply to a non-2xx response (x-should-retry wins). */
export function sdkWouldRetry(status: number, headers: Headers): boolean {
  const header = headers.get('x-should-retry');
  if (header === 'true') return true;
  if (header === 'false') return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

function retryCountOf(init: RequestInit | undefined): number {
  const raw = new Headers(init?.headers).get('x-stainless-retry-count');
  const n = raw === null ? 0 : Number.parseInt(raw, 10);
  return Number.isFinite(n) && n >= 0 ? n : 0;
}

export function createHttpWatch(options: HttpWatchOptions): HttpWatch {
  const { vendor, maxRetries, idleTimeoutMs, onNotice } = options;
  const baseFetch = options.baseFetch ?? globalThis.fetch;
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let fired = false;
  let announced = 0;
  let nonStream: { contentType: string; head: string } | null = null;

  const onCallerAbort = (): void => controller.abort(options.signal.reason);
  if (options.signal.aborted) controller.abort(options.signal.reason);
  else options.signal.addEventListener('abort', onCallerAbort, { once: true });

  const disarm = (): void => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
  const touch = (): void => {
    disarm();
    if (controller.signal.aborted) return;
    timer = setTimeout(() => {
      fired = true;
      controller.abort(new Error('idle timeout'));
    }, idleTimeoutMs);
  };
  const announce = (attempt: number, why: string): void => {
    if (attempt >= maxRetries || controller.signal.aborted) return;
    announced = attempt + 1;
    onNotice?.('warn', `${vendor}: retrying (${attempt + 1}/${maxRetries}) after ${why}`);
  };

  const watchedFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const attempt = retryCountOf(init);
    touch();
    let response: Response;
    try {
      response = await baseFetch(input, init);
    } catch (error) {
      disarm();
      if (!controller.signal.aborted) announce(attempt, `connection error (${causeOf(error)})`);
      throw error;
    }
    if (!response.ok) {
      disarm();
      if (sdkWouldRetry(response.status, response.headers)) announce(attempt, `${response.status} ${statusLabel(response.status)}`);
      return response;
    }
    const contentType = response.headers.get('content-type') ?? '';
    const isStream = contentType.includes('text/event-stream');
    if (!response.body) {
      disarm();
      return response;
    }
    touch();
    let head = '';
    const decoder = new TextDecoder();
    const body = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, ctrl) {
          touch();
          if (!isStream && head.length < 200) {
            head += decoder.decode(chunk, { stream: true });
            nonStream = { contentType: contentType || '(none)', head: head.slice(0, 200) };
          }
          ctrl.enqueue(chunk);
        },
        flush() {
          disarm();
        },
      }),
    );
    if (!isStream) nonStream = { contentType: contentType || '(none)', head: '' };
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };

  return {
    fetch: watchedFetch as typeof fetch,
    signal: controller.signal,
    idleFired: () => fired,
    nonStream: () => nonStream,
    retries: () => announced,
    dispose() {
      disarm();
      options.signal.removeEventListener('abort', onCallerAbort);
    },
  };
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause;
  const source = cause instanceof Error ? cause : error;
  const code = (source as { code?: unknown })?.code;
  if (typeof code === 'string') return code;
  return source instanceof Error ? source.message : String(source);
}
