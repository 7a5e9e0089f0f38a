import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSecretScrubber, NO_SECRETS } from '../../../src/authz/scrub';
import { createBus } from '../../../src/events/bus';

const KEY = 'sk-ant-test-0123456789abcdef';

test('scrubber: literal values only, deep in JSON values; untouched values keep their identity', () => {
  const s = createSecretScrubber([KEY, 'short', '']);
  assert.equal(s.active, true);
  assert.equal(s.text(`a ${KEY} b ${KEY}`), 'a [REDACTED] b [REDACTED]');
  assert.equal(s.text('short stays, password=hunter2 stays'), 'short stays, password=hunter2 stays');
  const clean = { a: [1, 'x', { b: null }], c: true };
  assert.equal(s.value(clean), clean);
  const dirty = { role: 'assistant', content: [{ type: 'tool_use', input: { content: `K=${KEY}\n`, [KEY]: 1 } }], at: 'now' };
  const out = s.value(dirty);
  assert.notEqual(out, dirty);
  assert.deepEqual(out, { role: 'assistant', content: [{ type: 'tool_use', input: { content: 'K=[REDACTED]\n', '[REDACTED]': 1 } }], at: 'now' });
  assert.equal(dirty.content[0]!.input.content, `K=${KEY}\n`, 'the input is not changed in place');
  assert.equal(createSecretScrubber(['abc']), NO_SECRETS);
});

test('scrubber stream: a key split across chunks is never emitted in pieces; other text flows at once', () => {
  const s = createSecretScrubber([KEY]);
  for (const cuts of [[1], [3, 10], [7, 8, 9, 20], [KEY.length - 1]]) {
    const text = `before ${KEY} after s`;
    const pieces: string[] = [];
    let at = 0;
    for (const c of [...cuts.map((x) => x + 'before '.length), text.length]) {
      pieces.push(text.slice(at, c));
      at = c;
    }
    const stream = s.stream();
    const shown = pieces.map((p) => stream.push(p));
    shown.push(stream.flush());
    assert.equal(shown.join(''), 'before [REDACTED] after s');
    for (const part of shown) assert.ok(!/0123456789/.test(part), `no key fragment in ${JSON.stringify(shown)}`);
  }
  const plain = s.stream();
  assert.equal(plain.push('hello wor'), 'hello wor');
  assert.equal(plain.push('ld, as'), 'ld, a', 'a tail that could start a key waits');
  assert.equal(plain.push('k me'), 'sk me');
  assert.equal(plain.flush(), '');
});

test('bus transform: every subscriber and the emitter see the scrubbed event', () => {
  const s = createSecretScrubber([KEY]);
  const bus = createBus({ runId: 'r', transform: s.value });
  const seen: unknown[] = [];
  bus.subscribeAll((e) => void seen.push(e));
  const returned = bus.emit({ type: 'notice', level: 'error', message: `401 for ${KEY}` });
  assert.equal((returned as { message: string }).message, '401 for [REDACTED]');
  assert.deepEqual(seen, [returned]);
});
