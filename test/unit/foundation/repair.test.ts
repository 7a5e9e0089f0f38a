import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ContentBlock, Message, Role } from '../../../src/model/message';
import { INTERRUPTED_RESULT, planRepair, repairHistory, sanitizeForProvider } from '../../../src/model/repair';

const at = '2026-01-01T00:00:00.000Z';
const msg = (role: Role, ...content: ContentBlock[]): Message => ({ role, content, at });
const text = (t: string): ContentBlock => ({ type: 'text', text: t });
const use = (id: string): ContentBlock => ({ type: 'tool_use', id, name: 'shell', input: { command: 'ls' } });
const result = (id: string, content = 'ok'): ContentBlock => ({ type: 'tool_result', toolUseId: id, content });
const interrupted = (id: string): ContentBlock => ({ type: 'tool_result', toolUseId: id, content: INTERRUPTED_RESULT, isError: true });

/** The provider invariant: roles alternate and each tool_use is answered exactly once in the next message. */
function assertProviderValid(history: readonly Message[]): void {
  for (let i = 0; i < history.length; i++) {
    const m = history[i]!;
    assert.ok(m.content.length > 0, `message ${i} is empty`);
    if (i > 0) assert.notEqual(m.role, history[i - 1]!.role, `messages ${i - 1} and ${i} share a role`);
    const uses = m.content.filter((b) => b.type === 'tool_use').map((b) => (b as { id: string }).id);
    const next = history[i + 1];
    const answered = next ? next.content.filter((b) => b.type === 'tool_result').map((b) => (b as { toolUseId: string }).toolUseId) : [];
    if (m.role === 'assistant') assert.deepEqual([...answered].sort(), [...uses].sort(), `message ${i}: tool uses answered exactly once`);
    if (m.role === 'user') {
      const firstNonResult = m.content.findIndex((b) => b.type !== 'tool_result');
      if (firstNonResult !== -1) assert.ok(m.content.slice(firstNonResult).every((b) => b.type !== 'tool_result'), `message ${i}: results come first`);
    }
  }
  if (history[0]?.role === 'user') {
    assert.ok(history[0].content.every((b) => b.type !== 'tool_result'), 'no result before any tool_use');
  }
}

test('repairHistory: unanswered tool_use at the tail gets one isError result each, in a user message', () => {
  const history = [msg('user', text('go')), msg('assistant', text('ok'), use('a'), use('b'))];
  const repaired = repairHistory(history, 'T');
  assert.equal(repaired.length, 3);
  assert.deepEqual(repaired[2], { role: 'user', at: 'T', content: [interrupted('a'), interrupted('b')] });
  assert.equal(history.length, 2, 'input not changed');
  assertProviderValid(repaired);
});

test('repairHistory: a custom reason is used (e.g. cancelled)', () => {
  const repaired = repairHistory([msg('assistant', use('a'))], 'T', 'cancelled by the user');
  assert.deepEqual(repaired[1]!.content, [{ type: 'tool_result', toolUseId: 'a', content: 'cancelled by the user', isError: true }]);
});

test('repairHistory: idempotent', () => {
  const once = repairHistory([msg('user', text('go')), msg('assistant', use('a'))], 'T');
  const twice = repairHistory(once, 'T2');
  assert.deepEqual(twice, once);
});

test('repairHistory: valid histories are returned unchanged (a copy)', () => {
  const valid: Message[][] = [
    [],
    [msg('user', text('hi'))],
    [msg('user', text('hi')), msg('assistant', text('hello'))],
    [msg('user', text('hi')), msg('assistant', use('a')), msg('user', result('a')), msg('assistant', text('done'))],
    [msg('user', text('hi')), msg('assistant', use('a')), msg('user', result('a'))],
  ];
  for (const history of valid) {
    const repaired = repairHistory(history);
    assert.deepEqual(repaired, history);
    assert.notEqual(repaired, history);
    const plan = planRepair(history, at);
    assert.deepEqual(plan, { append: [], answered: [], problems: [] });
  }
});

test('planRepair: names what it answers at the tail', () => {
  const plan = planRepair([msg('assistant', use('x'), use('y'))], 'T');
  assert.deepEqual(plan.answered, ['x', 'y']);
  assert.deepEqual(plan.problems, []);
  assert.equal(plan.append.length, 1);
});

test('planRepair: reports problems appends cannot fix, with message numbers', () => {
  // An orphan deep in the history.
  const deep = planRepair([msg('user', text('a')), msg('assistant', use('u1')), msg('user', text('b')), msg('assistant', text('c'))], at);
  assert.deepEqual(deep.append, []);
  assert.deepEqual(deep.problems, ['message 2: tool_use u1 has no result']);
  // A partial results message at the tail.
  const partial = planRepair([msg('assistant', use('a'), use('b')), msg('user', result('a'))], at);
  assert.deepEqual(partial.append, []);
  assert.ok(partial.problems.includes('last message answers 1 of 2 tool calls'), partial.problems.join('; '));
  assert.ok(partial.problems.includes('message 1: tool_use b has no result'));
});

test('sanitizeForProvider: valid histories pass through unchanged', () => {
  const history = [msg('user', text('hi')), msg('assistant', text('x'), use('a')), msg('user', result('a')), msg('assistant', text('done'))];
  assert.deepEqual(sanitizeForProvider(history), history);
});

test('sanitizeForProvider: every tool_use is answered in the next message', () => {
  const history = [
    msg('user', text('hi')),
    msg('assistant', use('a'), use('b')),
    msg('user', result('b')), // a is missing
    msg('assistant', use('c')),
    msg('assistant', text('no results in between')), // c is unanswered before another assistant message
    msg('user', text('next')),
    msg('assistant', use('d')), // unanswered at the tail
  ];
  const out = sanitizeForProvider(history);
  assertProviderValid(out);
  assert.deepEqual(out[2]!.content, [interrupted('a'), result('b')], 'results in tool_use order');
  assert.deepEqual(out[4]!.content, [interrupted('c')]);
  assert.deepEqual(out[out.length - 1]!.content, [interrupted('d')]);
});

test('sanitizeForProvider: stray and duplicate results are dropped', () => {
  const history = [
    msg('user', result('ghost'), text('hi')), // result before any tool_use
    msg('assistant', use('a')),
    msg('user', result('a', 'first'), result('a', 'second'), result('zzz')),
    msg('assistant', text('ok')),
  ];
  const out = sanitizeForProvider(history);
  assertProviderValid(out);
  assert.deepEqual(out[0]!.content, [text('hi')]);
  assert.deepEqual(out[2]!.content, [result('a', 'first')]);
});

test('sanitizeForProvider: a message of only stray results vanishes and its neighbours merge', () => {
  const history = [msg('user', text('hi')), msg('assistant', text('a')), msg('user', result('ghost')), msg('assistant', text('b'))];
  const out = sanitizeForProvider(history);
  assertProviderValid(out);
  assert.deepEqual(out, [msg('user', text('hi')), msg('assistant', text('a'), text('b'))]);
});

test('sanitizeForProvider: same-role neighbours merge; results stay first in a user message', () => {
  const history = [
    msg('user', text('one')),
    msg('user', text('two')),
    msg('assistant', text('x')),
    msg('assistant', use('a')),
    msg('user', text('typed while the tool ran'), result('a')),
    msg('user', text('and more')),
    msg('assistant', { type: 'text', text: '' }),
  ];
  const out = sanitizeForProvider(history);
  assertProviderValid(out);
  assert.deepEqual(out.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
  assert.deepEqual(out[0]!.content, [text('one'), text('two')]);
  assert.deepEqual(out[1]!.content, [text('x'), use('a')]);
  assert.deepEqual(out[2]!.content, [result('a'), text('typed while the tool ran'), text('and more')]);
});

test('sanitizeForProvider: empty messages are skipped without breaking alternation', () => {
  const history = [msg('user', text('a')), msg('assistant'), msg('user', text('b')), msg('assistant', text('c'))];
  const out = sanitizeForProvider(history);
  assertProviderValid(out);
  assert.deepEqual(out.map((m) => m.content.length), [2, 1]);
});

test('sanitizeForProvider: the input is not modified', () => {
  const history = [msg('assistant', use('a')), msg('user', text('x'), result('a'))];
  const copy = structuredClone(history);
  const out = sanitizeForProvider(history);
  assert.deepEqual(history, copy);
  assert.deepEqual(out[1]!.content, [result('a'), text('x')], 'results moved before text');
});
