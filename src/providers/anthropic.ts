import type { Provider, ProviderEvent, ProviderRequest } from './types';
import { createAnthropicAssembler, toAnthropicRequest } from './anthropic-translate';
import { drainStream } from './drain';

export interface AnthropicProviderOptions {
  readonly apiKey: string;
  /** Default https://api.anthropic.com (the SDK appends /v1/messages). */
  readonly baseURL?: string;
  /** SDK retries on 408/409/429/5xx/529, each announced through `request.onNotice`. */
  readonly maxRetries: number;
  /** No bytes for this long (before headers or between chunks) ends the turn with an error. */
  readonly idleTimeoutMs: number;
  /** For tests; default global fetch. */
  readonly fetch?: typeof fetch;
}

/**
 * The Anthropic provider: streaming Messages API through `@anthropic-ai/sdk`
 * (`messages.create({ stream: true })`, which tolerates streams without usage, unlike
 * `messages.stream()`). One SDK client per call, so each call has its own watched fetch.
 * The SDK is imported at the first call (a large module: start-up does not pay for it).
 */
export function createAnthropicProvider(options: AnthropicProviderOptions): Provider {
  const warned = new Set<string>();
  return {
    id: 'anthropic',
    stream: (request, signal) => streamAnthropic(options, request, signal, warned),
  };
}

/**
 * `messages.create` writes model deprecation warnings with `console.warn` on every call,
 * which would tear the TUI. It does so synchronously, so the warning is caught around the
 * synchronous part of the call only and reported once per model as a notice instead.
 */
function createQuietly<T>(call: () => T, onWarning: (text: string) => void): T {
  const original = console.warn;
  console.warn = (...args: unknown[]) => onWarning(args.map(String).join(' ').split('\n')[0]!);
  try {
    return call();
  } finally {
    console.warn = original;
  }
}

function streamAnthropic(
  options: AnthropicProviderOptions,
  request: ProviderRequest,
  signal: AbortSignal,
  warned: Set<string>,
): AsyncGenerator<ProviderEvent> {
  const { maxRetries, idleTimeoutMs } = options;
  return drainStream({
    vendor: 'anthropic',
    maxRetries,
    idleTimeoutMs,
    fetch: options.fetch,
    request,
    signal,
    assembler: createAnthropicAssembler(request.model),
    open: async (watch) => {
      const { default: Anthropic } = await import('@anthropic-ai/sdk');
      const client = new Anthropic({
        apiKey: options.apiKey,
        baseURL: options.baseURL ?? 'https://api.anthropic.com',
        // The one retry loop is http-watch.ts's.
        maxRetries: 0,
        timeout: Math.max(600_000, idleTimeoutMs + 1_000),
        fetch: watch.fetch,
        logLevel: 'off',
        openTelemetry: false,
      });
      const params = toAnthropicRequest(request);
      return createQuietly(
        () => client.messages.create(params, { signal: watch.signal }),
        (text) => {
          if (warned.has(request.model)) return;
          warned.add(request.model);
          request.onNotice?.('info', `anthropic: ${text}`);
        },
      );
    },
  });
}
