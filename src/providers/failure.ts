import type { ProviderEvent } from './types';
import type { HttpWatch, VendorId } from './http-watch';
import { statusLabel } from './http-watch';

/** The environment variable holding each vendor's key (named in key errors). */
export const KEY_VARIABLE: Record<VendorId, string> = { anthropic: 'ANTHROPIC_API_KEY', openai: 'OPENAI_API_KEY', gemini: 'GEMINI_API_KEY' };

export type ErrorEvent = Extract<ProviderEvent, { type: 'error' }>;

/** "120 s", "0.05 s": a duration for messages. */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toPrecision(3))} s`;
}

/** The idle-timeout message: "no data from anthropic for 120 s". */
export function idleMessage(vendor: VendorId, idleTimeoutMs: number): string {
  return `no data from ${vendor} for ${seconds(idleTimeoutMs)}`;
}

/**
 * Turn anything an SDK threw (or the way a stream ended) into one readable `error` event.
 * Order matters: the caller's abort and the idle timeout are checked before the error itself,
 * because both surface from the SDKs as a generic abort.
 */
export function describeFailure(
  vendor: VendorId,
  error: unknown,
  ctx: { watch: HttpWatch; callerSignal: AbortSignal; idleTimeoutMs: number; maxRetries: number },
): ErrorEvent {
  if (ctx.watch.idleFired()) return { type: 'error', message: idleMessage(vendor, ctx.idleTimeoutMs), retryable: true };
  if (ctx.callerSignal.aborted) return { type: 'error', message: 'aborted', retryable: false };
  const e = error as { name?: string; status?: unknown; error?: unknown; message?: unknown; cause?: unknown };
  const status = typeof e?.status === 'number' ? e.status : undefined;
  const detail = apiDetail(vendor, e?.error) ?? firstLine(e?.message);
  if (status === 401 || status === 403) {
    return {
      type: 'error',
      status,
      retryable: false,
      message: `the API key for ${vendor} was rejected: set ${KEY_VARIABLE[vendor]} (${status}${detail ? ` ${stripStatus(detail, status)}` : ''})`,
    };
  }
  if (status !== undefined) {
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    const retries = ctx.watch.retries();
    const refused = ctx.watch.refusedWaitMs();
    const gaveUp =
      refused !== null
        ? ` (not retried: the server asked to wait ${seconds(refused)})`
        : retries > 0 ? ` (gave up after ${retries} ${retries === 1 ? 'retry' : 'retries'})` : '';
    const text = detail ? stripStatus(detail, status) : statusLabel(status);
    return { type: 'error', status, retryable, message: `${vendor}: ${status} ${text}${gaveUp}` };
  }
  const name = typeof e?.name === 'string' ? e.name : '';
  if (name === 'APIConnectionTimeoutError') return { type: 'error', retryable: true, message: `${vendor}: the request timed out` };
  if (name === 'APIConnectionError') {
    return { type: 'error', retryable: true, message: `${vendor}: cannot connect (${firstLine(causeMessage(e)) ?? 'connection error'})` };
  }
  if (error instanceof SyntaxError) {
    return { type: 'error', retryable: true, message: `${vendor}: malformed data in the response stream (${firstLine(error.message)})` };
  }
  const hasBody = e?.error !== undefined && e?.error !== null && typeof e.error === 'object';
  if (hasBody || name === 'APIError' || name === 'OverloadedError') {
    // An `error` event inside a 200 stream: the SDKs throw an APIError without a status.
    const retryable = /overloaded|rate_limit|api_error|server/i.test(detail ?? '');
    return { type: 'error', retryable, message: `${vendor}: error in the response stream: ${detail ?? 'unknown error'}` };
  }
  const msg = firstLine(e?.message) ?? String(error);
  if (/terminated|socket|ECONNRESET|other side closed|premature/i.test(msg + ' ' + (causeMessage(e) ?? ''))) {
    return { type: 'error', retryable: true, message: `${vendor}: the connection dropped mid-response (${firstLine(causeMessage(e)) ?? msg})` };
  }
  return { type: 'error', retryable: false, message: `${vendor}: ${msg}` };
}

/** The error for a stream that ended without its final event (no message_stop / finish_reason). */
export function endedEarly(vendor: VendorId, watch: HttpWatch): ErrorEvent {
  const bad = watch.nonStream();
  if (bad) {
    const head = bad.head.replace(/\s+/g, ' ').trim().slice(0, 80);
    return {
      type: 'error',
      retryable: false,
      message: `${vendor}: the response is not an event stream (${bad.contentType})${head ? `: ${head}` : ''}`,
    };
  }
  return { type: 'error', retryable: true, message: `${vendor}: the response stream ended before the reply was complete` };
}

/** `type: message` from an error body, across both vendors' shapes. */
function apiDetail(vendor: VendorId, body: unknown): string | null {
  if (!body || typeof body !== 'object') return null;
  const b = body as { error?: { type?: unknown; message?: unknown }; type?: unknown; message?: unknown; code?: unknown };
  const inner = vendor === 'anthropic' && b.error && typeof b.error === 'object' ? b.error : b;
  const type = typeof inner.type === 'string' && inner.type !== 'error' ? inner.type : null;
  const message = typeof inner.message === 'string' ? firstLine(inner.message) : null;
  if (type && message) return `${type}: ${message}`;
  return message ?? type;
}

function stripStatus(text: string, status: number): string {
  return text.startsWith(`${status} `) ? text.slice(String(status).length + 1) : text;
}

function causeMessage(e: { cause?: unknown } | undefined): string | undefined {
  // undici nests the socket error: TypeError("terminated") → cause SocketError("other side closed").
  let cause = e?.cause as { message?: unknown; code?: unknown; cause?: unknown } | undefined;
  let best: string | undefined;
  for (let depth = 0; cause && depth < 4; depth++) {
    if (typeof cause.message === 'string' && cause.message) best = cause.message;
    else if (typeof cause.code === 'string') best = cause.code;
    cause = cause.cause as typeof cause;
  }
  return best;
}

function firstLine(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0) return undefined;
  const line = value.split('\n')[0]!.trim();
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
