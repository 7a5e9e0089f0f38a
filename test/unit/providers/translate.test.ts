import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { createAnthropicAssembler, mapAnthropicStopReason, toAnthropicMessage, toAnthropicRequest } from '../../../src/providers/anthropic-translate';
import { createOpenAIAssembler, mapFinishReason, toOpenAIMessages, toOpenAIRequest } from '../../../src/providers/openai-translate';
import { toolCallEvent } from '../../../src/providers/tool-call';
import { request } from '../../helpers/provider-run';

const ev = (e: unknown) => e as RawMessageStreamEvent;

test('anthropic assembler: thinking, redacted thinking and server blocks stay out; text and tools come through', () => {
  const a = createAnthropicAssembler('m');
  const out = [
    ev({ type: 'message_start', message: { model: 'claude-x', usage: { input_tokens: 3, output_tokens: 1, cache_read_input_tokens: 7 } } }),
    ev({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }),
    ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'secret plan' } }),
    ev({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } }),
    ev({ type: 'content_block_stop', index: 0 }),
    ev({ type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'xx' } }),
    ev({ type: 'content_block_stop', index: 1 }),
    ev({ type: 'content_block_start', index: 2, content_block: { type: 'server_tool_use', id: 's', name: 'web_search', input: {} } }),
    ev({ type: 'content_block_stop', index: 2 }),
    ev({ type: 'content_block_start', index: 3, content_block: { type: 'text', text: 'Hi' } }),
    ev({ type: 'content_block_delta', index: 3, delta: { type: 'text_delta', text: ' there' } }),
    ev({ type: 'content_block_stop', index: 3 }),
    ev({ type: 'content_block_start', index: 4, content_block: { type: 'tool_use', id: 't', name: 'n', input: { preset: true } } }),
    ev({ type: 'content_block_stop', index: 4 }),
    ev({ type: 'message_delta', delta: { stop_reason: 'pause_turn' }, usage: { output_tokens: 9 } }),
  ].flatMap((e) => a.push(e));
  assert.deepEqual(out, [
    { type: 'text-delta', text: 'Hi' },
    { type: 'text-delta', text: ' there' },
    { type: 'tool-call', id: 't', name: 'n', input: { preset: true } },
  ]);
  assert.equal(a.finish(), null, 'no message_stop yet');
  a.push(ev({ type: 'message_stop' }));
  assert.deepEqual(a.finish(), [
    { type: 'usage', model: 'claude-x', inputTokens: 3, outputTokens: 9, cacheReadTokens: 7, cacheWriteTokens: 0 },
    { type: 'end', stopReason: 'other' },
  ]);
});

test('anthropic stop reasons', () => {
  assert.equal(mapAnthropicStopReason('end_turn'), 'end_turn');
  assert.equal(mapAnthropicStopReason('refusal'), 'refusal');
  assert.equal(mapAnthropicStopReason('model_context_window_exceeded'), 'max_tokens');
  assert.equal(mapAnthropicStopReason(null), 'other');
});

test('anthropic request: no system or tools when empty; empty messages get a placeholder; raw input wrapped', () => {
  const params = toAnthropicRequest(request({ system: '', tools: [] }));
  assert.equal(params.system, undefined);
  assert.equal(params.tools, undefined);
  assert.deepEqual(toAnthropicMessage({ role: 'assistant', content: [{ type: 'text', text: '' }], at: '' }), {
    role: 'assistant',
    content: [{ type: 'text', text: '(empty)' }],
  });
  assert.deepEqual(toAnthropicMessage({ role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'n', input: '{bad' }], at: '' }).content, [
    { type: 'tool_use', id: 'a', name: 'n', input: { _invalidInput: '{bad' } },
  ]);
});

test('tool input: empty is {}, invalid JSON and non-objects carry inputError', () => {
  assert.deepEqual(toolCallEvent('i', 'n', '  '), { type: 'tool-call', id: 'i', name: 'n', input: {} });
  assert.deepEqual(toolCallEvent('i', 'n', '{"a":[1]}'), { type: 'tool-call', id: 'i', name: 'n', input: { a: [1] } });
  for (const [json, why] of [['{"a":', /not valid JSON/], ['[1,2]', /must be a JSON object, got an array/], ['"x"', /got string/], ['null', /got null/]] as const) {
    const e = toolCallEvent('i', 'n', json);
    assert.equal(e.type, 'tool-call');
    if (e.type === 'tool-call') {
      assert.equal(e.input, json);
      assert.match(e.inputError!, why);
    }
  }
});

test('openai request: official API gets max_completion_tokens; empty assistant turns are valid', () => {
  const params = toOpenAIRequest(request({ system: '' }), { maxTokensField: 'max_completion_tokens' });
  assert.equal(params.max_completion_tokens, 1024);
  assert.equal(params.max_tokens, undefined);
  assert.equal(params.messages[0]!.role, 'user', 'no empty system message');
  assert.deepEqual(toOpenAIMessages({ role: 'assistant', content: [], at: '' }), [{ role: 'assistant', content: '' }]);
  assert.deepEqual(toOpenAIMessages({ role: 'user', content: [{ type: 'text', text: '' }], at: '' }), [{ role: 'user', content: '(empty)' }]);
});

test('openai assembler: missing index or id, usage before finish, finish reasons', () => {
  const a = createOpenAIAssembler('m');
  const chunk = (c: unknown) => c as ChatCompletionChunk;
  const out = [
    chunk({ model: 'local', choices: [{ index: 0, delta: { tool_calls: [{ function: { name: 'a', arguments: '{}' } }, { function: { name: 'b', arguments: '' } }] } }] }),
    chunk({ model: 'local', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 5, completion_tokens: 2 } }),
  ].flatMap((c) => a.push(c));
  assert.deepEqual(out, [
    { type: 'tool-call', id: 'call_0', name: 'a', input: {} },
    { type: 'tool-call', id: 'call_1', name: 'b', input: {} },
  ]);
  assert.deepEqual(a.finish(), [
    { type: 'usage', model: 'local', inputTokens: 5, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 },
    { type: 'end', stopReason: 'tool_use' },
  ]);
  assert.equal(mapFinishReason('content_filter', false), 'refusal');
  assert.equal(mapFinishReason('stop', false), 'end_turn');
  assert.equal(mapFinishReason(undefined, false), 'other');
  assert.equal(createOpenAIAssembler('m').finish(), null);
});
