import { setTimeout as delay } from 'node:timers/promises';
/**
 * Delivery to one webhook: a bounded FIFO queue, one request in flight, retries with
 * exponential backoff, a timeout per attempt. Never throws and never blocks the caller:
 * `push` returns at once; problems are reported through `report` once per failure streak
 * (and once when the endpoint works again), so a dead endpoint cannot flood the notices.
 */

export interface DeliveryOptions {
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** Attempts after the first one. */
  readonly retries: number;
  /** Bodies waiting beyond this are dropped, oldest first. */
  readonly queueLimit: number;
  readonly fetch: typeof fetch;
  /** Delay before retry `attempt` (1-based). */
  readonly backoffMs: (attempt: number) => number;
  readonly report: (level: 'info' | 'warn', message: string) => void;
}

export interface Delivery {
  push(body: string): void;
  /** Resolves once the queue is empty and nothing is in flight. */
  idle(): Promise<void>;
  /** Stop: the request in flight is aborted, the queue dropped. */
  abort(): void;
}

/** Statuses worth another attempt; any other non-2xx status is final (a bad URL or token will not heal). */
const RETRYABLE = new Set([408, 425, 429, 500, 502, 503, 504]);

export function defaultBackoff(attempt: number): number {
  return Math.min(30_000, 500 * 2 ** (attempt - 1));
}

/** The URL without its path and query: webhook URLs often hold their secret there (Slack, ntfy topics). */
export function urlLabel(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.pathname === '/' && !parsed.search ? parsed.origin : `${parsed.origin}/…`;
  } catch {
    return '(bad URL)';
  }
}

type Attempt = { ok: true } | { ok: false; retry: boolean; problem: string };

export function createDelivery(options: DeliveryOptions): Delivery {
  const queue: string[] = [];
  const stop = new AbortController();
  const label = urlLabel(options.url);
  let running = false;
  let failing = false;
  let dropped = 0;
  let idleWaiters: (() => void)[] = [];

  const attempt = async (body: string): Promise<Attempt> => {
    const signal = AbortSignal.any([stop.signal, AbortSignal.timeout(options.timeoutMs)]);
    try {
      const response = await options.fetch(options.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...options.headers },
        body,
        signal,
        redirect: 'error',
      });
      await response.body?.cancel().catch(() => undefined);
      if (response.ok) return { ok: true };
      return { ok: false, retry: RETRYABLE.has(response.status), problem: `HTTP ${response.status}` };
    } catch (error) {
      if (stop.signal.aborted) return { ok: false, retry: false, problem: 'stopped' };
      const timedOut = (error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError';
      return { ok: false, retry: true, problem: timedOut ? `no answer within ${options.timeoutMs} ms` : (error as Error).message };
    }
  };

  /** The backoff, cut short by stop. */
  const sleep = (ms: number): Promise<void> => delay(ms, undefined, { signal: stop.signal }).catch(() => undefined);

  const send = async (body: string): Promise<void> => {
    let outcome = await attempt(body);
    for (let n = 1; !outcome.ok && outcome.retry && n <= options.retries && !stop.signal.aborted; n++) {
      await sleep(options.backoffMs(n));
      if (stop.signal.aborted) return;
      outcome = await attempt(body);
    }
    if (stop.signal.aborted) return;
    if (outcome.ok) {
      if (failing) options.report('info', `notify: ${label} works again`);
      failing = false;
      return;
    }
    if (!failing) {
      const attempts = outcome.retry ? options.retries + 1 : 1;
      options.report('warn', `notify: ${label} failed: ${outcome.problem} (${attempts} attempt${attempts === 1 ? '' : 's'}; notification dropped); further failures are not reported until it works again`);
    }
    failing = true;
  };

  const pump = async (): Promise<void> => {
    running = true;
    while (queue.length > 0 && !stop.signal.aborted) await send(queue.shift()!);
    running = false;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const wake of waiters) wake();
  };

  return {
    push(body) {
      if (stop.signal.aborted) return;
      queue.push(body);
      if (queue.length > options.queueLimit) {
        queue.shift();
        if (dropped++ === 0) options.report('warn', `notify: ${label} is behind; the oldest waiting notifications are dropped (at most ${options.queueLimit} wait)`);
      } else if (queue.length <= options.queueLimit / 2) {
        dropped = 0;
      }
      if (!running) void pump();
    },
    idle() {
      if (!running && queue.length === 0) return Promise.resolve();
      return new Promise((resolve) => idleWaiters.push(resolve));
    },
    abort() {
      queue.length = 0;
      stop.abort();
    },
  };
}
