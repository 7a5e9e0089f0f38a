import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadFauxScript, parseFauxScript, pickReply, matchInputOf, fillTemplate } from '../../../src/providers/faux-script';
import { request, userText } from '../../helpers/provider-run';
import { testTempDir } from '../../helpers/tmp';

const FIXTURES = fileURLToPath(new URL('../../fixtures/faux/', import.meta.url));
const APP_CONFIG = fileURLToPath(new URL('../../../config/', import.meta.url));

test('a valid script parses with defaults filled in', () => {
  const r = parseFauxScript('replies:\n  - text: hi\n', 's.yaml');
  assert.ok(r.ok, r.ok ? '' : r.error);
  assert.equal(r.script.version, 1);
  assert.equal(r.script.fallback, '(faux) no scripted reply for {{agent}}');
  assert.equal(r.script.file, 's.yaml');
});

test('errors name the file, the line and the key path', () => {
  const cases: Array<[string, RegExp]> = [
    ['replies:\n  - text: hi\n  - agent: x\n    tetx: typo\n', /^s\.yaml:4: replies\.1\.tetx: .*tetx/],
    ['replies:\n  - agent: x\n', /^s\.yaml:2: replies\.0: a reply needs text, toolCalls or error/],
    ['replies:\n  - text: a\n    chunkSize: 0\n', /^s\.yaml:3: replies\.0\.chunkSize: /],
    ['replies:\n  - text: a\n    on: tool\n', /^s\.yaml:3: replies\.0\.on: /],
    ['replies:\n  - text: a\n    delayMs: soon\n', /^s\.yaml:3: replies\.0\.delayMs: /],
    ['replies:\n  - oneOf:\n      - text: a\n      - agent: b\n        first: maybe\n', /^s\.yaml:5: replies\.0\.oneOf\.1\.first: /],
    ['replies: [\n', /^s\.yaml:\d+: YAML syntax/],
    ['version: 2\n', /^s\.yaml:1: version: /],
  ];
  for (const [text, expected] of cases) {
    const r = parseFauxScript(text, 's.yaml');
    assert.equal(r.ok, false, text);
    if (!r.ok) assert.match(r.error, expected, text);
  }
});

test('an invalid regex is reported on its line', async () => {
  const r = await loadFauxScript(join(FIXTURES, 'bad-regex.yaml'));
  assert.equal(r.ok, false);
  if (!r.ok) assert.match(r.error, /bad-regex\.yaml:6: replies\.1\.when: not a valid regular expression/);
});

test('a missing file is one clear line', async (t) => {
  const dir = await testTempDir(t, 'legion-faux-');
  const r = await loadFauxScript(join(dir, 'nope.yaml'));
  assert.equal(r.ok, false);
  if (!r.ok) assert.match(r.error, /nope\.yaml: cannot read the faux script \(no such file\)/);
  await writeFile(join(dir, 'ok.yaml'), 'replies: []\n');
  assert.ok((await loadFauxScript(join(dir, 'ok.yaml'))).ok);
});

test('the shipped demo script is valid', async () => {
  const r = await loadFauxScript(join(APP_CONFIG, 'demo-script.yaml'));
  assert.ok(r.ok, r.ok ? '' : r.error);
  assert.ok(r.script.replies.length >= 5);
});

test('matching: agent, first, on, when and purpose', () => {
  const parsed = parseFauxScript(
    [
      'replies:',
      '  - { agent: a, first: true, text: opener }',
      '  - { agent: a, on: tool-error, text: err }',
      '  - { agent: a, on: tool-result, when: "^ok", text: fine }',
      '  - { purpose: triage, text: judge }',
      '  - { agent: a, on: message, when: "HELLO", text: hi, repeat: true }',
    ].join('\n'),
    'm.yaml',
  );
  assert.ok(parsed.ok);
  const consumed = new Set<number>();
  const pick = (req: Parameters<typeof matchInputOf>[0]) => pickReply(parsed.script, consumed, matchInputOf(req))?.text ?? null;
  const meta = { participantId: 'a', sessionId: 's' };
  const toolTurn = (content: string, isError = false) =>
    request({
      meta,
      messages: [
        userText('x'),
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'n', input: {} }], at: '' },
        { role: 'user', content: [{ type: 'tool_result', toolUseId: 't1', content, isError }], at: '' },
      ],
    });
  assert.equal(pick(request({ meta: { participantId: 'b', sessionId: 's' } })), null, 'other agent');
  assert.equal(pick(request({ meta })), 'opener');
  assert.equal(pick(request({ meta, messages: [userText('nothing')] })), null, 'opener consumed, nothing else matches');
  assert.equal(pick(toolTurn('ok: wrote it')), 'fine', 'tool-error entry skipped for a good result');
  assert.equal(pick(toolTurn('boom', true)), 'err');
  assert.equal(pick(request({ meta, messages: [userText('a'), userText('say hello')] })), 'hi', 'case-insensitive');
  assert.equal(pick(request({ meta, messages: [userText('a'), userText('Hello again')] })), 'hi', 'repeat stays');
  assert.equal(pick(request({ meta: { ...meta, purpose: 'triage' } })), 'judge');
});

test('oneOf: the first matching alternative answers and the group is consumed', () => {
  const parsed = parseFauxScript(
    ['replies:', '  - oneOf:', '      - { when: yes, text: A }', '      - { text: B }', '  - { text: C }'].join('\n'),
    'o.yaml',
  );
  assert.ok(parsed.ok);
  const consumed = new Set<number>();
  const pick = (t: string) => pickReply(parsed.script, consumed, matchInputOf(request({ messages: [userText(t)] })))?.text;
  assert.equal(pick('no'), 'B');
  assert.equal(pick('yes'), 'C', 'the group was consumed by its first answer');
  assert.equal(pick('yes'), undefined);
});

test('templates fill known names and leave others', () => {
  assert.equal(fillTemplate('{{agent}} / {{ lastText }} / {{nope}}', { agent: 'a', lastText: 'b' }), 'a / b / {{nope}}');
  assert.equal(fillTemplate('{{x}}', { x: 'y'.repeat(700) }).length, 601);
});
