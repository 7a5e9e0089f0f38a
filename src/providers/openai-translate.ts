import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { Message } from '../model/message';
import type { ProviderEvent, ProviderRequest, StopReason } from './types';
import { toolCallEvent } from './tool-call';

/**
 * Internal format (docs/design.md#message-format) ↔ OpenAI Chat Completions. Structural translation:
 * - system prompt → a leading `system` message;
 * - assistant `tool_use` blocks → `tool_calls` (arguments as JSON text);
 * - `tool_result` blocks → one `role: tool` message each, placed before any user text of the
 *   same message (they must directly follow the assistant's tool calls); an error result is
 *   prefixed with "Error: " since the API has no error flag.
 */
export interface OpenAITranslateOptions {
  /** `max_completion_tokens` (OpenAI; required by o-series and gpt-5) vs `max_tokens` (compatible servers). */
  readonly maxTokensField: 'max_completion_tokens' | 'max_tokens';
}

export function toOpenAIRequest(request: ProviderRequest, options: OpenAITranslateOptions): ChatCompletionCreateParamsStreaming {
  const messages: ChatCompletionMessageParam[] = [];
  if (request.system.length > 0) messages.push({ role: 'system', content: request.system });
  for (const m of request.messages) messages.push(...toOpenAIMessages(m));
  const params: ChatCompletionCreateParamsStreaming = {
    model: request.model,
    messages,
    stream: true,
    stream_options: { include_usage: true },
  };
  if (options.maxTokensField === 'max_tokens') params.max_tokens = request.maxTokens;
  else params.max_completion_tokens = request.maxTokens;
  if (request.tools.length > 0) {
    params.tools = request.tools.map(
      (t): ChatCompletionTool => ({
        type: 'function',
        function: { name: t.name, description: t.description, parameters: { type: 'object', ...t.inputSchema } },
      }),
    );
  }
  return params;
}

export function toOpenAIMessages(message: Message): ChatCompletionMessageParam[] {
  if (message.role === 'assistant') {
    const text = message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
    const toolCalls: ChatCompletionMessageToolCall[] = [];
    for (const b of message.content) {
      if (b.type !== 'tool_use') continue;
      const args = typeof b.input === 'string' ? b.input : JSON.stringify(b.input ?? {});
      toolCalls.push({ id: b.id, type: 'function', function: { name: b.name, arguments: args } });
    }
    const out: ChatCompletionMessageParam = { role: 'assistant', content: text.length > 0 ? text : null };
    if (toolCalls.length > 0) out.tool_calls = toolCalls;
    else if (text.length === 0) out.content = '';
    return [out];
  }
  const out: ChatCompletionMessageParam[] = [];
  const texts: string[] = [];
  for (const b of message.content) {
    switch (b.type) {
      case 'tool_result':
        out.push({ role: 'tool', tool_call_id: b.toolUseId, content: b.isError ? `Error: ${b.content}` : b.content });
        break;
      case 'text':
        if (b.text.length > 0) texts.push(b.text);
        break;
      case 'tool_use':
        break; // never in a user message (sanitizeForProvider)
      default: {
        const never: never = b;
        throw new Error(`unknown content block ${JSON.stringify(never)}`);
      }
    }
  }
  if (texts.length > 0 || out.length === 0) out.push({ role: 'user', content: texts.join('\n\n') || '(empty)' });
  return out;
}

export function mapFinishReason(reason: string | null | undefined, hadToolCalls: boolean): StopReason {
  switch (reason) {
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'stop':
      // Some compatible servers report `stop` for a tool call turn.
      return hadToolCalls ? 'tool_use' : 'end_turn';
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'refusal';
    default:
      return hadToolCalls ? 'tool_use' : 'other';
  }
}

type PendingCall = { id: string; name: string; args: string; signature?: string };

export interface AssemblerOptions {
  /** Id of a tool call the server sent without one (default `call_<index>`). */
  readonly newCallId?: (index: number) => string;
  /**
   * A tool call carried `extra_content.google.thought_signature` (Gemini): called with the
   * call's final id when the call is emitted, so the next request can send it back.
   */
  readonly onThoughtSignature?: (callId: string, signature: string) => void;
}

/**
 * Folds chat completion chunks into ProviderEvents. Tool calls are assembled by `index`
 * (parallel calls interleave) and emitted, in index order, when the choice finishes.
 * Usage comes in a final chunk with empty `choices` (`include_usage`), or on any chunk (Gemini);
 * `prompt_tokens` includes cached tokens, reported apart as cache reads; output tokens are at
 * least `total - prompt` (Gemini may leave thinking tokens out of `completion_tokens`).
 * A delta without `index` (Gemini) continues the last call, unless it brings a new id: then it
 * starts the next one.
 */
export function createOpenAIAssembler(requestModel: string, options: AssemblerOptions = {}) {
  const calls = new Map<number, PendingCall>();
  let model = requestModel;
  let finishReason: string | null = null;
  let finished = false;
  let emittedCalls = false;
  let usage: Extract<ProviderEvent, { type: 'usage' }> | null = null;

  /** Where a delta without `index` goes: the last call, or a new one when its id is new. */
  const indexlessSlot = (id: string | undefined): number => {
    const lastIndex = calls.size === 0 ? -1 : Math.max(...calls.keys());
    const lastCall = calls.get(lastIndex);
    if (!lastCall || (id && lastCall.id && id !== lastCall.id)) return lastIndex + 1;
    return lastIndex;
  };

  const flushCalls = (): ProviderEvent[] => {
    if (emittedCalls) return [];
    emittedCalls = true;
    return [...calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, c]) => {
        const id = c.id || (options.newCallId ? options.newCallId(index) : `call_${index}`);
        if (c.signature) options.onThoughtSignature?.(id, c.signature);
        return toolCallEvent(id, c.name, c.args);
      });
  };

  return {
    push(chunk: ChatCompletionChunk): ProviderEvent[] {
      const out: ProviderEvent[] = [];
      if (typeof chunk.model === 'string' && chunk.model) model = chunk.model;
      for (const choice of chunk.choices ?? []) {
        if (choice.index !== undefined && choice.index !== 0) continue; // n = 1
        const delta = choice.delta ?? {};
        if (typeof delta.content === 'string' && delta.content.length > 0) out.push({ type: 'text-delta', text: delta.content });
        for (const [position, tc] of (delta.tool_calls ?? []).entries()) {
          // Without `index`, the calls listed in one delta are distinct calls.
          const index = typeof tc.index === 'number' ? tc.index : position === 0 ? indexlessSlot(tc.id) : Math.max(...calls.keys()) + 1;
          const call = calls.get(index) ?? { id: '', name: '', args: '' };
          if (tc.id) call.id = tc.id;
          const signature = (tc as { extra_content?: { google?: { thought_signature?: unknown } } }).extra_content?.google?.thought_signature;
          if (typeof signature === 'string' && signature) call.signature = signature;
          if (tc.function?.name) call.name = call.name && call.name !== tc.function.name ? call.name + tc.function.name : tc.function.name;
          if (typeof tc.function?.arguments === 'string') call.args += tc.function.arguments;
          calls.set(index, call);
        }
        if (choice.finish_reason) {
          finishReason = choice.finish_reason;
          finished = true;
          out.push(...flushCalls());
        }
      }
      if (chunk.usage) {
        const prompt = chunk.usage.prompt_tokens ?? 0;
        const cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
        const completion = Math.max(chunk.usage.completion_tokens ?? 0, (chunk.usage.total_tokens ?? 0) - prompt);
        usage = {
          type: 'usage',
          model,
          inputTokens: Math.max(0, prompt - cached),
          outputTokens: completion,
          cacheReadTokens: cached,
          cacheWriteTokens: 0,
        };
      }
      return out;
    },
    usage(): ProviderEvent | null {
      return usage ? { ...usage, model } : null;
    },
    /** After the stream ended normally: the closing events, or null if no choice ever finished. */
    finish(): ProviderEvent[] | null {
      if (!finished) return null;
      const out: ProviderEvent[] = [];
      const u = this.usage();
      if (u) out.push(u);
      out.push({ type: 'end', stopReason: mapFinishReason(finishReason, calls.size > 0) });
      return out;
    },
  };
}
