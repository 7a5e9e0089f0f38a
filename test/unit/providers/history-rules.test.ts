import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { anthropicHistoryError, openaiHistoryError } from '../../helpers/history-rules';
import { toAnthropicRequest } from '../../../src/providers/anthropic-translate';
import { toOpenAIRequest } from '../../../src/providers/openai-translate';
import { sanitizeForProvider } from '../../../src/model/repair';
import type { ContentBlock, Message } from '../../../src/model/message';
import { request } from '../../helpers/provider-run';

const m = (role: Message['role'], ...content: ContentBlock[]): Message => ({ role, content, at: '' });
const text = (t: string): ContentBlock => ({ type: 'text', text: t });
const use = (id: string): ContentBlock => ({ type: 'tool_use', id, name: 'n', input: {} });
const result = (id: string): ContentBlock => ({ type: 'tool_result', toolUseId: id, content: 'r' });

const both = (messages: Message[]) => ({
  anthropic: anthropicHistoryError(toAnthropicRequest(request({ messages })) as never),
  openai: openaiHistoryError(toOpenAIRequest(request({ messages }), { maxTokensField: 'max_tokens' }) as never),
});

test('the validators accept good histories and refuse what the APIs refuse', () => {
  assert.deepEqual(both([m('user', text('a')), m('assistant', use('t1'), use('t2')), m('user', result('t1'), result('t2'), text('go on'))]), { anthropic: null, openai: null });
  const dangling = both([m('user', text('a')), m('assistant', use('t1'))]);
  assert.match(dangling.anthropic!, /`tool_use` ids were found without `tool_result` blocks immediately after: t1/);
  assert.match(dangling.openai!, /did not have response messages: t1/);
  const orphan = both([m('user', text('a')), m('assistant', text('b')), m('user', result('zz'))]);
  assert.match(orphan.anthropic!, /unexpected `tool_use_id` found in `tool_result` blocks: zz/);
  assert.match(orphan.openai!, /must be a response to a preceeding message with 'tool_calls'/);
  assert.match(anthropicHistoryError({ messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] })!, /text content blocks must be non-empty/);
  assert.match(anthropicHistoryError({ messages: [{ role: 'assistant', content: 'x' }] })!, /first message must use the "user" role/);
});

test('every history, once sanitized and translated, is one the APIs accept', () => {
  // Damaged histories of the kinds a crash, a cancel or an error leave behind.
  const histories: Message[][] = [
    [m('user', text('a')), m('assistant', text('partial'), use('t1'))],
    [m('user', text('a')), m('assistant', use('t1'), use('t2')), m('user', result('t2'))],
    [m('user', text('a')), m('assistant', use('t1')), m('user', text('interrupting'))],
    [m('user', text('a')), m('user', result('ghost'), text('b'))],
    [m('user', text('a')), m('assistant', use('t1')), m('assistant', text('again'))],
    [m('user', text('a')), m('assistant', text('')), m('user', text(''), text('x'))],
  ];
  for (const h of histories) {
    const errors = both(sanitizeForProvider(h));
    assert.deepEqual(errors, { anthropic: null, openai: null }, JSON.stringify(h));
  }
});
