import type {
  ContentBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  RawMessageStreamEvent,
  TextBlockParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages';
import type { ContentBlock, Message } from '../model/message';
import type { ProviderEvent, ProviderRequest, StopReason } from './types';
import { toolCallEvent } from './tool-call';

/**
 * Internal format (docs/design.md#message-format) → Anthropic Messages API, and the API's stream events →
 * ProviderEvents. Near identity: camelCase ↔ snake_case. Prompt caching: `cache_control`
 * marks the system prompt, the last tool definition and the last block of the last message
 * (3 of the 4 breakpoints the API allows), so each call of a long agent loop re-reads the
 * previous prefix from the cache.
 */
const EPHEMERAL = { type: 'ephemeral' } as const;

export function toAnthropicRequest(request: ProviderRequest): MessageCreateParamsStreaming {
  const tools: Tool[] = request.tools.map((t) => ({
    name: t.name,
    description: t.description,
    input_schema: { type: 'object', ...t.inputSchema } as Tool['input_schema'],
  }));
  const lastTool = tools[tools.length - 1];
  if (lastTool) tools[tools.length - 1] = { ...lastTool, cache_control: EPHEMERAL };

  const messages = request.messages.map(toAnthropicMessage);
  const last = messages[messages.length - 1];
  if (last && Array.isArray(last.content) && last.content.length > 0) {
    const blocks = [...last.content];
    const tail = blocks[blocks.length - 1]!;
    if (tail.type === 'text' || tail.type === 'tool_result' || tail.type === 'tool_use') {
      blocks[blocks.length - 1] = { ...tail, cache_control: EPHEMERAL };
      messages[messages.length - 1] = { ...last, content: blocks } as MessageParam;
    }
  }

  const params: MessageCreateParamsStreaming = {
    model: request.model,
    max_tokens: request.maxTokens,
    messages,
    stream: true,
  };
  if (request.system.length > 0) {
    const system: TextBlockParam[] = [{ type: 'text', text: request.system, cache_control: EPHEMERAL }];
    params.system = system;
  }
  if (tools.length > 0) params.tools = tools;
  return params;
}

export function toAnthropicMessage(message: Message): MessageParam {
  const content = message.content.map(toAnthropicBlock).filter((b): b is ContentBlockParam => b !== null);
  // The API rejects empty content and empty text blocks.
  if (content.length === 0) content.push({ type: 'text', text: '(empty)' });
  return message.role === 'user' ? { role: 'user', content } : { role: 'assistant', content };
}

function toAnthropicBlock(block: ContentBlock): ContentBlockParam | null {
  switch (block.type) {
    case 'text':
      return block.text.length > 0 ? { type: 'text', text: block.text } : null;
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, input: asInputObject(block.input) };
    case 'tool_result': {
      const out: ContentBlockParam = { type: 'tool_result', tool_use_id: block.toolUseId, content: block.content };
      if (block.isError) out.is_error = true;
      return out;
    }
    default: {
      const never: never = block;
      throw new Error(`unknown content block ${JSON.stringify(never)}`);
    }
  }
}

/** The API needs an object as tool input; a raw (invalid JSON) input is wrapped so the model sees it. */
function asInputObject(input: unknown): Record<string, unknown> {
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) return input as Record<string, unknown>;
  return input === undefined ? {} : { _invalidInput: input };
}

export function mapAnthropicStopReason(reason: string | null | undefined): StopReason {
  switch (reason) {
    case 'end_turn':
    case 'tool_use':
    case 'max_tokens':
    case 'stop_sequence':
    case 'refusal':
      return reason;
    case 'model_context_window_exceeded':
      return 'max_tokens';
    default:
      return 'other';
  }
}

type BlockState = { kind: 'text' } | { kind: 'tool'; id: string; name: string; json: string; startInput: unknown } | { kind: 'skip' };

/**
 * Folds the raw stream events of one response into ProviderEvents. `push` returns the
 * events to yield now; `finish` the closing `usage` + `end` (or null when the stream never
 * reached `message_stop`: the caller reports that as an error).
 */
export function createAnthropicAssembler(requestModel: string) {
  const blocks = new Map<number, BlockState>();
  let model = requestModel;
  let stopReason: StopReason = 'other';
  let stopped = false;
  let started = false;
  const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

  const takeUsage = (u: Record<string, unknown> | null | undefined): void => {
    if (!u) return;
    const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
    usage.inputTokens = num(u.input_tokens) ?? usage.inputTokens;
    usage.outputTokens = num(u.output_tokens) ?? usage.outputTokens;
    usage.cacheReadTokens = num(u.cache_read_input_tokens) ?? usage.cacheReadTokens;
    usage.cacheWriteTokens = num(u.cache_creation_input_tokens) ?? usage.cacheWriteTokens;
  };

  return {
    push(event: RawMessageStreamEvent): ProviderEvent[] {
      switch (event.type) {
        case 'message_start':
          started = true;
          if (typeof event.message?.model === 'string' && event.message.model) model = event.message.model;
          takeUsage(event.message?.usage as unknown as Record<string, unknown> | undefined);
          return [];
        case 'content_block_start': {
          const b = event.content_block;
          if (b.type === 'text') {
            blocks.set(event.index, { kind: 'text' });
            return b.text ? [{ type: 'text-delta', text: b.text }] : [];
          }
          if (b.type === 'tool_use') {
            blocks.set(event.index, { kind: 'tool', id: b.id, name: b.name, json: '', startInput: b.input });
            return [];
          }
          // thinking, redacted_thinking and server-side blocks stay out of the internal history.
          blocks.set(event.index, { kind: 'skip' });
          return [];
        }
        case 'content_block_delta': {
          const state = blocks.get(event.index);
          const d = event.delta;
          if (d.type === 'text_delta' && state?.kind === 'text') return d.text ? [{ type: 'text-delta', text: d.text }] : [];
          if (d.type === 'input_json_delta' && state?.kind === 'tool') state.json += d.partial_json;
          return [];
        }
        case 'content_block_stop': {
          const state = blocks.get(event.index);
          blocks.delete(event.index);
          if (state?.kind !== 'tool') return [];
          // Input arrives as input_json_delta fragments; without any, the start block's input holds it.
          if (state.json.trim() === '' && state.startInput && typeof state.startInput === 'object') {
            return [{ type: 'tool-call', id: state.id, name: state.name, input: state.startInput }];
          }
          return [toolCallEvent(state.id, state.name, state.json)];
        }
        case 'message_delta':
          stopReason = mapAnthropicStopReason(event.delta?.stop_reason);
          takeUsage(event.usage as unknown as Record<string, unknown> | undefined);
          return [];
        case 'message_stop':
          stopped = true;
          return [];
        default:
          return [];
      }
    },
    /** Usage seen so far (also reported when the stream fails: those tokens were billed). */
    usage(): ProviderEvent | null {
      return started ? { type: 'usage', model, ...usage } : null;
    },
    finish(): ProviderEvent[] | null {
      if (!stopped) return null;
      const out: ProviderEvent[] = [];
      const u = this.usage();
      if (u) out.push(u);
      out.push({ type: 'end', stopReason });
      return out;
    },
  };
}
