import { setTimeout as delay } from 'node:timers/promises';
import type { Provider, ProviderEvent, ProviderRequest, StopReason } from './types';
import { fillDeep, fillTemplate, matchInputOf, pickReply, type FauxReply, type FauxScript } from './faux-script';

export { loadFauxScript, parseFauxScript, type FauxScript } from './faux-script';

export interface FauxProviderOptions {
  readonly script: FauxScript;
  /** Sleep used for `delayMs` (tests may pass a fake); must reject or resolve early on abort. */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/**
 * The faux provider: answers from a script (see faux-script.ts), streams text in chunks,
 * emits scripted tool calls with deterministic ids, a usage event (scripted, else estimated
 * at 4 characters a token) and `end`, or a scripted error. With no matching reply it answers
 * the script's `fallback` text instead of failing. Aborting `signal` ends the stream at once
 * with an error "aborted". Consumption state lives in the returned provider.
 */
export function createFauxProvider(options: FauxProviderOptions): Provider & { readonly script: FauxScript } {
  const consumed = new Set<number>();
  const sleep = options.sleep ?? abortableSleep;
  return {
    id: 'faux',
    script: options.script,
    stream: (request, signal) => streamFaux(options.script, consumed, sleep, request, signal),
  };
}

async function* streamFaux(
  script: FauxScript,
  consumed: Set<number>,
  sleep: (ms: number, signal: AbortSignal) => Promise<void>,
  request: ProviderRequest,
  signal: AbortSignal,
): AsyncGenerator<ProviderEvent> {
  const aborted: ProviderEvent = { type: 'error', message: 'aborted', retryable: false };
  if (signal.aborted) {
    yield aborted;
    return;
  }
  const input = matchInputOf(request);
  const vars = {
    agent: input.agent ?? 'unknown agent',
    session: request.meta?.sessionId ?? '',
    model: request.model,
    lastText: input.lastText,
    firstText: input.firstText,
  };
  const reply: FauxReply = pickReply(script, consumed, input) ?? { text: fillTemplate(script.fallback, vars) };
  const chunkSize = reply.chunkSize ?? script.defaults.chunkSize ?? 16;
  const delayMs = reply.delayMs ?? script.defaults.delayMs ?? 0;

  const pause = async (): Promise<boolean> => {
    if (delayMs > 0) {
      try {
        await sleep(delayMs, signal);
      } catch {
        /* aborted */
      }
    }
    return !signal.aborted;
  };

  const text = reply.text === undefined ? '' : fillTemplate(reply.text, vars);
  const points = Array.from(text);
  for (let at = 0; at < points.length; at += chunkSize) {
    if (!(await pause())) {
      yield aborted;
      return;
    }
    yield { type: 'text-delta', text: points.slice(at, at + chunkSize).join('') };
  }

  if (reply.error !== undefined) {
    if (signal.aborted) {
      yield aborted;
      return;
    }
    const e = typeof reply.error === 'string' ? { message: reply.error } : reply.error;
    const event: Extract<ProviderEvent, { type: 'error' }> = { type: 'error', message: fillTemplate(e.message, vars) };
    if (e.status !== undefined) event.status = e.status;
    if (e.retryable !== undefined) event.retryable = e.retryable;
    yield event;
    return;
  }

  const calls = reply.toolCalls ?? [];
  if (calls.length > 0 && !(await pause())) {
    yield aborted;
    return;
  }
  const idBase = `toolu_faux_${hash(`${request.meta?.sessionId ?? ''}|${input.agent ?? ''}`)}_${request.messages.length}`;
  for (const [i, call] of calls.entries()) {
    yield { type: 'tool-call', id: call.id ?? `${idBase}_${i + 1}`, name: call.name, input: fillDeep(call.input, vars) };
  }
  if (signal.aborted) {
    yield aborted;
    return;
  }

  const outChars = text.length + calls.reduce((n, c) => n + c.name.length + JSON.stringify(c.input).length, 0);
  const inChars = request.system.length + JSON.stringify(request.messages).length;
  yield {
    type: 'usage',
    model: script.model ?? request.model,
    inputTokens: reply.usage?.inputTokens ?? Math.ceil(inChars / 4),
    outputTokens: reply.usage?.outputTokens ?? Math.max(1, Math.ceil(outChars / 4)),
    cacheReadTokens: reply.usage?.cacheReadTokens ?? 0,
    cacheWriteTokens: reply.usage?.cacheWriteTokens ?? 0,
  };
  const stop: StopReason = reply.stopReason ?? (calls.length > 0 ? 'tool_use' : 'end_turn');
  yield { type: 'end', stopReason: stop };
}

/** FNV-1a, 6 hex digits: stable ids from a string. */
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0').slice(0, 6);
}

/** Wait `ms`, or less when `signal` aborts (resolves either way). */
function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch(() => undefined);
}
