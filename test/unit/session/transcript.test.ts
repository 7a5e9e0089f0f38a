import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { foldResult, renderTranscript, transcriptLines } from '../../../src/session/transcript';
import { keyArgumentOf as keyArgument } from '../../../src/collective/tools/shipped';
import { assistantText, assistantTools, results, userText } from './helpers';

const key = { initiatorId: 'user', responderId: 'ur-agent', name: 'default' };

test('a transcript says who said what, with tool calls and their folded results', () => {
  const text = renderTranscript(key, [
    userText('Write a haiku about the sea\ninto docs/haiku.md', 0),
    assistantTools([
      { id: 't1', name: 'communicator', input: { targetId: 'scribe', message: 'a haiku please', sessionName: 'poems' } },
      { id: 't2', name: 'file_write', input: { path: 'docs/haiku.md', content: '...' } },
      { id: 't3', name: 'shell', input: { command: 'git status' } },
    ], 'Asking the scribe.', 2),
    results([
      { id: 't1', content: 'Waves fold into foam\nsalt wind' },
      { id: 't2', content: 'denied by rule no-docs: docs are frozen', isError: true },
      { id: 't3', content: '' },
    ], 3),
    assistantText('Done.', 4),
  ], keyArgument);
  assert.equal(text, [
    'user → ur-agent',
    '',
    'user · 2026-11-21 19:30:00',
    '  Write a haiku about the sea',
    '  into docs/haiku.md',
    '',
    'ur-agent · 2026-11-21 19:30:02',
    '  Asking the scribe.',
    '  ⚙ communicator scribe · poems: a haiku please',
    '    ↳ ok: Waves fold into foam…',
    '  ⚙ file_write docs/haiku.md',
    '    ↳ error: denied by rule no-docs: docs are frozen',
    '  ⚙ shell git status',
    '    ↳ ok',
    '',
    'ur-agent · 2026-11-21 19:30:04',
    '  Done.',
    '',
  ].join('\n'));
});

test('unanswered calls and stray results are shown where they stand; named sessions in the header', () => {
  const stray = results([{ id: 'zz', content: 'orphan' }]);
  const lines = transcriptLines({ initiatorId: 'ur-agent', responderId: 'scribe', name: 'files' }, [
    assistantTools([{ id: 'x', name: 'glob', input: { pattern: '**/*.md' } }]),
    { ...stray, content: [...stray.content, { type: 'text', text: 'hello' }] },
  ], keyArgument);
  assert.deepEqual(lines.map((l) => l.text), [
    'ur-agent → scribe · files',
    '',
    'scribe · 2026-11-21 19:30:00',
    '  ⚙ glob **/*.md',
    '    ↳ (no result)',
    '',
    'ur-agent · 2026-11-21 19:30:00',
    '  ↳ ok: orphan (for zz)',
    '  hello',
  ]);
  assert.deepEqual(lines.map((l) => l.messageIndex), [-1, 0, 0, 0, 0, 1, 1, 1, 1]);
});

test('key arguments come from the tools (one wording everywhere); transcript lines stay short', () => {
  assert.equal(keyArgument('file_read', { path: 'src/a.ts', offset: 3 }), 'src/a.ts');
  assert.equal(keyArgument('grep', { pattern: 'TODO', path: 'src' }), 'TODO in src');
  assert.equal(keyArgument('file_list', {}), '.');
  assert.equal(keyArgument('communicator', { targetId: 'scribe', message: 'a\n  b', sessionName: 'default' }), 'scribe: a b');
  assert.equal(keyArgument('retire_agent', { id: 'scribe' }), 'scribe');
  assert.equal(keyArgument('resolve_approval', { requestId: 'r1', decision: 'approved' }), 'r1 approved');
  assert.equal(keyArgument('todo_write', { todos: [{}, {}] }), '2 todos');
  assert.equal(keyArgument('list_participants', {}), '');
  assert.equal(keyArgument('mystery', { a: 1, b: 'text' }), 'text');
  const long = transcriptLines(key, [assistantTools([{ id: 'l', name: 'shell', input: { command: 'echo ' + 'x'.repeat(200) } }])], keyArgument);
  assert.equal(long[3]!.text.length, '  ⚙ shell '.length + 80);
  assert.equal(keyArgument('shell', 'not an object'), '');
  assert.equal(foldResult({ type: 'tool_result', toolUseId: 'a', content: '\n\n  second  \nthird' }), '↳ ok: second…');
  assert.equal(foldResult({ type: 'tool_result', toolUseId: 'a', content: 'y'.repeat(300), isError: true }).length, '↳ error: '.length + 100);
});
