import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contentBlockSchema, messageSchema, textOf, toolResultsOf, toolUsesOf, type Message } from '../../../src/model/message';

const at = '2026-01-01T00:00:00.000Z';

test('messageSchema accepts every block kind of a valid message', () => {
  const message: Message = {
    role: 'assistant',
    at,
    content: [
      { type: 'text', text: 'let me look' },
      { type: 'tool_use', id: 'tu_1', name: 'file_read', input: { path: 'a.txt' } },
      { type: 'tool_use', id: 'tu_2', name: 'list_tools', input: {} },
    ],
  };
  assert.deepEqual(messageSchema.parse(message), message);
  const results: Message = { role: 'user', at, content: [{ type: 'tool_result', toolUseId: 'tu_1', content: 'x', isError: true }, { type: 'tool_result', toolUseId: 'tu_2', content: '' }] };
  assert.deepEqual(messageSchema.parse(results), results);
  assert.equal(messageSchema.safeParse({ role: 'user', content: [], at }).success, true);
});

test('messageSchema rejects invalid messages', () => {
  const bad: Array<[string, unknown]> = [
    ['role', { role: 'system', content: [], at }],
    ['missing at', { role: 'user', content: [] }],
    ['content not array', { role: 'user', content: 'hi', at }],
    ['unknown block', { role: 'user', content: [{ type: 'image', data: '' }], at }],
    ['text not string', { role: 'user', content: [{ type: 'text', text: 3 }], at }],
    ['tool_use empty id', { role: 'assistant', content: [{ type: 'tool_use', id: '', name: 'x', input: {} }], at }],
    ['tool_use no name', { role: 'assistant', content: [{ type: 'tool_use', id: 'a', input: {} }], at }],
    ['snake_case tool_use_id', { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'x' }], at }],
    ['result content not string', { role: 'user', content: [{ type: 'tool_result', toolUseId: 'a', content: [{ type: 'text', text: 'x' }] }], at }],
    ['isError not boolean', { role: 'user', content: [{ type: 'tool_result', toolUseId: 'a', content: 'x', isError: 'yes' }], at }],
    ['null', null],
  ];
  for (const [why, value] of bad) assert.equal(messageSchema.safeParse(value).success, false, why);
  assert.equal(contentBlockSchema.safeParse({ type: 'text' }).success, false);
});

test('textOf / toolUsesOf / toolResultsOf pick their blocks in order', () => {
  const m: Message = {
    role: 'assistant', at,
    content: [{ type: 'text', text: 'a' }, { type: 'tool_use', id: '1', name: 'n', input: null }, { type: 'text', text: 'b' }],
  };
  assert.equal(textOf(m), 'ab');
  assert.deepEqual(toolUsesOf(m).map((u) => u.id), ['1']);
  assert.deepEqual(toolResultsOf(m), []);
});
