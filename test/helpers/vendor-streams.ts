import { sseOf } from './vendor-server';

/**
 * Hand-built SSE bodies in the exact shapes of the vendor fixtures, for cases no vendor
 * recording covers (emoji split across deltas, malformed tool JSON, cache usage, ...).
 */
export interface AnthropicStreamSpec {
  readonly model?: string;
  readonly text?: readonly string[];
  readonly tool?: { readonly id?: string; readonly name: string; readonly json: readonly string[] };
  readonly stopReason?: string;
  readonly usage?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number };
  /** Leave out message_delta/message_stop (a stream cut short by the server). */
  readonly unterminated?: boolean;
}

export function anthropicStream(spec: AnthropicStreamSpec): string {
  const u = spec.usage ?? {};
  const events: Array<{ event: string; data: unknown }> = [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          id: 'msg_test', type: 'message', role: 'assistant', model: spec.model ?? 'claude-sonnet-4-5-20250929',
          content: [], stop_reason: null, stop_sequence: null,
          usage: { input_tokens: u.input ?? 10, output_tokens: 1, cache_read_input_tokens: u.cacheRead ?? 0, cache_creation_input_tokens: u.cacheWrite ?? 0 },
        },
      },
    },
  ];
  let index = 0;
  if (spec.text) {
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
    for (const t of spec.text) events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: t } } });
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    index++;
  }
  if (spec.tool) {
    events.push({
      event: 'content_block_start',
      data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id: spec.tool.id ?? 'toolu_test', name: spec.tool.name, input: {} } },
    });
    for (const j of spec.tool.json) {
      events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: j } } });
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  }
  if (!spec.unterminated) {
    events.push({
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: spec.stopReason ?? (spec.tool ? 'tool_use' : 'end_turn'), stop_sequence: null },
        usage: { output_tokens: u.output ?? 5 },
      },
    });
    events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  }
  return sseOf(events);
}

export interface OpenAIStreamSpec {
  readonly model?: string;
  readonly text?: readonly string[];
  /** Tool call deltas in wire order: `{ index, id?, name?, args? }`. */
  readonly toolDeltas?: ReadonlyArray<{ index: number; id?: string; name?: string; args?: string }>;
  readonly finishReason?: string | null;
  readonly usage?: { prompt: number; completion: number; cached?: number } | null;
  readonly done?: boolean;
}

export function openaiStream(spec: OpenAIStreamSpec): string {
  const model = spec.model ?? 'gpt-4.1-2025-04-14';
  const chunk = (delta: unknown, finish: string | null = null) => ({
    data: { id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] },
  });
  const events: Array<{ data: unknown }> = [chunk({ role: 'assistant', content: spec.text ? '' : null })];
  for (const t of spec.text ?? []) events.push(chunk({ content: t }));
  for (const d of spec.toolDeltas ?? []) {
    const fn: Record<string, string> = {};
    if (d.name !== undefined) fn.name = d.name;
    if (d.args !== undefined) fn.arguments = d.args;
    const call: Record<string, unknown> = { index: d.index, function: fn };
    if (d.id !== undefined) {
      call.id = d.id;
      call.type = 'function';
    }
    events.push(chunk({ tool_calls: [call] }));
  }
  if (spec.finishReason !== null) events.push(chunk({}, spec.finishReason ?? (spec.toolDeltas ? 'tool_calls' : 'stop')));
  if (spec.usage !== null) {
    const u = spec.usage ?? { prompt: 12, completion: 4 };
    events.push({
      data: {
        id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1, model, choices: [],
        usage: {
          prompt_tokens: u.prompt, completion_tokens: u.completion, total_tokens: u.prompt + u.completion,
          prompt_tokens_details: { cached_tokens: u.cached ?? 0 },
        },
      },
    });
  }
  if (spec.done !== false) events.push({ data: '[DONE]' });
  return sseOf(events);
}
