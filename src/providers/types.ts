import type { Message } from '../model/message';

/** A tool as a provider sees it: JSON Schema of its input. */
export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  /** JSON Schema (draft 2020-12 / OpenAPI compatible object schema). */
  readonly inputSchema: Record<string, unknown>;
}

export interface ProviderRequest {
  readonly system: string;
  /** Internal format (docs/design.md#message-format), already sanitized (`sanitizeForProvider`). */
  readonly messages: readonly Message[];
  readonly tools: readonly ToolDefinition[];
  readonly model: string;
  readonly maxTokens: number;
  /** Who is asking (the faux provider scripts replies per agent; real providers ignore it). */
  readonly meta?: { readonly participantId: string; readonly sessionId: string; readonly purpose?: 'turn' | 'triage' | 'compaction' };
  /** Called once per SDK retry, e.g. "anthropic: retrying (1/2) after 529 overloaded". */
  readonly onNotice?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'refusal' | 'other';

/**
 * What a provider streams. A turn ends with exactly one `end` or one `error`.
 * `tool-call` carries the assembled input; when the model's arguments were not valid JSON,
 * `input` is the raw string and `inputError` says why (the runtime turns it into an error
 * tool_result the model can correct).
 */
export type ProviderEvent =
  | { type: 'text-delta'; text: string }
  | { type: 'tool-call'; id: string; name: string; input: unknown; inputError?: string }
  | {
      type: 'usage';
      model: string;
      inputTokens: number;
      outputTokens: number;
      cacheReadTokens: number;
      cacheWriteTokens: number;
    }
  | { type: 'end'; stopReason: StopReason }
  | { type: 'error'; message: string; status?: number; retryable?: boolean };

/**
 * A model provider. Contract: `stream` never throws, neither synchronously nor while
 * iterating; every failure (HTTP, network, malformed chunk, idle timeout, abort) ends the
 * iteration with one `error` event. Aborting `signal` stops the HTTP stream at once.
 */
export interface Provider {
  readonly id: string;
  stream(request: ProviderRequest, signal: AbortSignal): AsyncIterable<ProviderEvent>;
}
