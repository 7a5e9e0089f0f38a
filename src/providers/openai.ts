import type { Provider, ProviderEvent, ProviderRequest } from './types';
import { createOpenAIAssembler, toOpenAIRequest } from './openai-translate';
import { drainStream } from './drain';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';

export interface OpenAIProviderOptions {
  /** Compatible servers that need no key accept any value. */
  readonly apiKey: string;
  /** Default https://api.openai.com/v1; a compatible server's `/v1` URL otherwise. */
  readonly baseURL?: string;
  readonly maxRetries: number;
  readonly idleTimeoutMs: number;
  readonly fetch?: typeof fetch;
}

/** True when the base URL is OpenAI's own API (not a compatible server). */
export function isOfficialOpenAI(baseURL: string | undefined): boolean {
  if (!baseURL) return true;
  try {
    return new URL(baseURL).hostname === 'api.openai.com';
  } catch {
    return false;
  }
}

/**
 * The OpenAI provider: streaming Chat Completions through `openai` v6 with
 * `stream_options.include_usage`. Against a compatible server (Ollama, llama.cpp, vLLM)
 * the token limit is sent as `max_tokens`, which they all understand; OpenAI itself gets
 * `max_completion_tokens`, which its reasoning models require.
 * The SDK is imported at the first call (start-up does not pay for it).
 */
export function createOpenAIProvider(options: OpenAIProviderOptions): Provider {
  return {
    id: 'openai',
    stream: (request, signal) => streamOpenAI(options, request, signal),
  };
}

function streamOpenAI(options: OpenAIProviderOptions, request: ProviderRequest, signal: AbortSignal): AsyncGenerator<ProviderEvent> {
  const { maxRetries, idleTimeoutMs } = options;
  return drainStream({
    vendor: 'openai',
    maxRetries,
    idleTimeoutMs,
    fetch: options.fetch,
    request,
    signal,
    assembler: createOpenAIAssembler(request.model),
    open: async (watch) => {
      const { default: OpenAI } = await import('openai');
      const client = new OpenAI({
        apiKey: options.apiKey,
        baseURL: options.baseURL ?? OPENAI_DEFAULT_BASE_URL,
        // The one retry loop is http-watch.ts's.
        maxRetries: 0,
        timeout: Math.max(600_000, idleTimeoutMs + 1_000),
        fetch: watch.fetch,
        logLevel: 'off',
        // Keys from the environment of tests or the user's shell are never read implicitly.
        organization: null,
        project: null,
      });
      const params = toOpenAIRequest(request, {
        maxTokensField: isOfficialOpenAI(options.baseURL) ? 'max_completion_tokens' : 'max_tokens',
      });
      return client.chat.completions.create(params, { signal: watch.signal });
    },
  });
}
