import type { ChatCompletionCreateParamsStreaming, ChatCompletionMessageToolCall } from 'openai/resources/chat/completions';
import type { Provider, ProviderEvent, ProviderRequest } from './types';
import { createOpenAIAssembler, toOpenAIRequest } from './openai-translate';
import { drainStream } from './drain';

/** Google's OpenAI-compatible endpoint for the Gemini API. */
export const GEMINI_DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta/openai/';
/**
 * What Google documents for a tool call whose thought signature is not known (a history from
 * another provider, or from before a restart): Gemini 3 then skips the signature check.
 */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator';
/** Thought signatures kept per provider (oldest dropped first). */
const SIGNATURES_KEPT = 4096;

export interface GeminiProviderOptions {
  readonly apiKey: string;
  /** Default `GEMINI_DEFAULT_BASE_URL`; a test server's URL otherwise. */
  readonly baseURL?: string;
  readonly maxRetries: number;
  readonly idleTimeoutMs: number;
  readonly fetch?: typeof fetch;
}

/**
 * Gemini through the `openai` SDK and Google's OpenAI-compatible endpoint (docs/gemini.md).
 * The endpoint's differences from OpenAI handled here and in the shared assembler:
 * - no `stream_options` is sent (the endpoint has refused it); usage arrives on the last chunk;
 * - `max_tokens`, not `max_completion_tokens`;
 * - tool-call deltas may lack `index` and ids; a tool-call turn may finish with `stop`;
 * - thinking tokens may be left out of `completion_tokens` (counted from `total_tokens`);
 * - Gemini 3 requires each tool call's `extra_content.google.thought_signature` back in the
 *   next request: kept in memory per call id, else `SKIP_SIGNATURE` on the step's first call;
 * - error bodies may be a JSON array (`[{"error": {…}}]`): unwrapped so the message shows.
 */
export function createGeminiProvider(options: GeminiProviderOptions): Provider {
  const signatures = new Map<string, string>();
  let generated = 0;
  const remember = (id: string, signature: string): void => {
    signatures.set(id, signature);
    if (signatures.size > SIGNATURES_KEPT) signatures.delete(signatures.keys().next().value!);
  };
  return {
    id: 'gemini',
    stream: (request, signal) => streamGemini(options, request, signal, {
      signatureOf: (id) => signatures.get(id),
      remember,
      // Unique across the process: the runtime keys results by call id.
      newCallId: (index) => `gemini_call_${Date.now().toString(36)}_${(generated++).toString(36)}_${index}`,
    }),
  };
}

interface CallMemory {
  signatureOf(id: string): string | undefined;
  remember(id: string, signature: string): void;
  newCallId(index: number): string;
}

function streamGemini(options: GeminiProviderOptions, request: ProviderRequest, signal: AbortSignal, memory: CallMemory): AsyncGenerator<ProviderEvent> {
  const { maxRetries, idleTimeoutMs } = options;
  return drainStream({
    vendor: 'gemini',
    maxRetries,
    idleTimeoutMs,
    fetch: options.fetch,
    request,
    signal,
    assembler: createOpenAIAssembler(request.model, { newCallId: memory.newCallId, onThoughtSignature: memory.remember }),
    open: async (watch) => {
      const { default: OpenAI } = await import('openai');
      const client = new OpenAI({
        apiKey: options.apiKey,
        baseURL: options.baseURL ?? GEMINI_DEFAULT_BASE_URL,
        // The one retry loop is http-watch.ts's.
        maxRetries: 0,
        timeout: Math.max(600_000, idleTimeoutMs + 1_000),
        fetch: unwrapArrayErrors(watch.fetch),
        logLevel: 'off',
        organization: null,
        project: null,
      });
      return client.chat.completions.create(toGeminiRequest(request, memory.signatureOf), { signal: watch.signal });
    },
  });
}

type GeminiToolCall = ChatCompletionMessageToolCall & { extra_content?: { google: { thought_signature: string } } };

/** The Chat Completions request as Gemini's endpoint takes it (see `createGeminiProvider`). */
export function toGeminiRequest(request: ProviderRequest, signatureOf: (callId: string) => string | undefined): ChatCompletionCreateParamsStreaming {
  const params = toOpenAIRequest(request, { maxTokensField: 'max_tokens' });
  delete params.stream_options;
  const needsSignatures = requiresSignatures(request.model);
  for (const message of params.messages) {
    if (message.role !== 'assistant' || !message.tool_calls?.length) continue;
    message.tool_calls.forEach((call, position) => {
      const known = signatureOf(call.id);
      const signature = known ?? (needsSignatures && position === 0 ? SKIP_SIGNATURE : undefined);
      if (signature) (call as GeminiToolCall).extra_content = { google: { thought_signature: signature } };
    });
  }
  return params;
}

/** Gemini 3 and later validate thought signatures; 1.x and 2.x do not. */
function requiresSignatures(model: string): boolean {
  const major = /^(?:models\/)?gemini-(\d+)/i.exec(model)?.[1];
  return major === undefined || Number(major) >= 3;
}

/**
 * The endpoint may answer an error as `[{"error": {…}}]`; the SDK reads `body.error` and would
 * lose the message. Rewrites such a body (of an error status only) to its single object.
 */
export function unwrapArrayErrors(base: typeof fetch): typeof fetch {
  return async (input, init) => {
    const response = await base(input, init);
    if (response.ok || !(response.headers.get('content-type') ?? '').includes('json')) return response;
    const text = await response.text();
    let body = text;
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed) && parsed.length > 0 && parsed[0] && typeof parsed[0] === 'object' && 'error' in parsed[0]) body = JSON.stringify(parsed[0]);
    } catch { /* not JSON after all: pass it on as is */ }
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
