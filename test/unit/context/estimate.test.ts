import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ContextMeter, charsOf, CHARS_PER_TOKEN, tokensOfRange } from '../../../src/context/estimate';
import type { Message } from '../../../src/model/message';
import { toolTurns, user } from './helpers';

test('meter: anchor on the reported prompt tokens, then add only what was appended since', () => {
  const meter = new ContextMeter();
  const history: Message[] = toolTurns(2, 100);
  assert.equal(meter.ready, false);
  meter.rebase(tokensOfRange(history, 0, history.length), history.length);
  assert.equal(meter.estimate(history), tokensOfRange(history, 0, history.length));
  // The provider says the request of the first 8 messages was 5000 tokens.
  meter.report(5000, history.length);
  const added = user('y'.repeat(320));
  history.push(added);
  assert.equal(meter.estimate(history), Math.ceil(5000 + 320 / CHARS_PER_TOKEN + 4));
  // Estimating again without appends gives the same figure (nothing counted twice).
  assert.equal(meter.estimate(history), Math.ceil(5000 + 320 / CHARS_PER_TOKEN + 4));
  meter.invalidate();
  assert.equal(meter.ready, false);
});

test('meter: each estimate walks only the new messages (a message is measured once)', () => {
  const history: Message[] = toolTurns(2500, 50);
  const meter = new ContextMeter();
  meter.rebase(0, 0);
  meter.estimate(history);
  // Measured messages are cached: poisoning the cache proves later estimates do not re-read them.
  let reads = 0;
  const spy = new Proxy(history, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && /^\d+$/.test(prop)) reads++;
      return Reflect.get(target, prop, receiver);
    },
  });
  history.push(user('one more'));
  meter.estimate(spy);
  assert.equal(reads, 1);
});

test('charsOf counts text, tool inputs and results', () => {
  const m: Message = { role: 'assistant', content: [{ type: 'text', text: 'abc' }, { type: 'tool_use', id: 'id1', name: 'sh', input: { a: 1 } }], at: '' };
  assert.equal(charsOf(m), 3 + 3 + 2 + JSON.stringify({ a: 1 }).length);
});
