import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseClientLine, parseServerLine, METHODS, MAX_CLIENT_LINE_BYTES } from '../../../src/serve/protocol';
import { createLineReader } from '../../../src/serve/line-reader';
import { prng } from '../../helpers/prng';

test('hello with protocol and since parses; a bad hello is a bad-request', () => {
  const ok = parseClientLine('{"hello":{"protocol":1,"since":42}}');
  assert.deepEqual(ok, { ok: true, message: { kind: 'hello', hello: { protocol: 1, since: 42 } } });
  const bad = parseClientLine('{"hello":{"protocol":"1"}}');
  assert.equal(bad.ok, false);
  assert.equal(!bad.ok && bad.error.kind, 'bad-request');
  const extra = parseClientLine('{"hello":{"protocol":1,"evil":true}}');
  assert.equal(extra.ok, false);
});

test('requests: every method parses with its params; unknown methods and bad params keep the id', () => {
  const send = parseClientLine(JSON.stringify({ id: 7, method: 'send', params: { responderId: 'ur-agent', text: 'hi' } }));
  assert.deepEqual(send, { ok: true, message: { kind: 'request', id: 7, method: 'send', params: { responderId: 'ur-agent', text: 'hi' } } });
  const unknown = parseClientLine('{"id":"a1","method":"rm -rf"}');
  assert.deepEqual(unknown, { ok: false, id: 'a1', error: { kind: 'unknown-method', message: 'unknown method "rm -rf"' } });
  const proto = parseClientLine('{"id":3,"method":"__proto__"}');
  assert.equal(!proto.ok && proto.error.kind, 'unknown-method');
  const wrongType = parseClientLine('{"id":4,"method":"send","params":{"responderId":5,"text":"x"}}');
  assert.equal(wrongType.ok, false);
  assert.equal(!wrongType.ok && wrongType.id, 4);
  assert.equal(!wrongType.ok && wrongType.error.kind, 'bad-params');
  const noParams = parseClientLine('{"id":5,"method":"sessions"}');
  assert.equal(noParams.ok, true);
  assert.ok(METHODS.includes('resolveApprovals'));
});

test('bad JSON and non-objects are errors, never throws', () => {
  for (const line of ['', '{', 'null', '[]', '42', '"x"', '{"id":null}', '{"id":1.5,"method":"x"}', '\u0000\uffff']) {
    const parsed = parseClientLine(line);
    assert.equal(parsed.ok, false, line);
  }
});

test('server lines: events need a known type and envelope; anything else is refused', () => {
  const ev = parseServerLine(JSON.stringify({ event: { seq: 1, at: 'x', runId: 'r', type: 'notice', level: 'info', message: 'm' } }));
  assert.equal(ev.ok && ev.message.kind, 'event');
  assert.equal(parseServerLine(JSON.stringify({ event: { seq: 1, at: 'x', runId: 'r', type: 'nope' } })).ok, false);
  assert.equal(parseServerLine('{"id":1,"result":null}').ok, true);
  assert.equal(parseServerLine('{"id":1,"error":{"kind":"refused","message":"no"}}').ok, true);
  assert.equal(parseServerLine('not json').ok, false);
});

test('line reader: splits, keeps partial lines, drops oversize lines without buffering them', () => {
  const lines: string[] = [];
  const oversize: number[] = [];
  const reader = createLineReader({ maxBytes: 10, onLine: (l) => lines.push(l), onOversize: (n) => oversize.push(n) });
  reader.push(Buffer.from('ab\ncd'));
  reader.push(Buffer.from('e\r\n'));
  reader.push(Buffer.from('0123456789abc'));
  assert.equal(reader.buffered, 0, 'an oversize line is not held');
  reader.push(Buffer.from('def\nok\n0123456789'));
  reader.push(Buffer.from('x\n'));
  reader.push(Buffer.from('tail-without-newline'));
  assert.deepEqual(lines, ['ab', 'cde', 'ok']);
  assert.deepEqual(oversize, [16, 11]);
});

test('fuzz: random bytes, truncated and huge lines, wrong types never throw', () => {
  const random = prng(16);
  let errors = 0;
  let handled = 0;
  const reader = createLineReader({
    maxBytes: MAX_CLIENT_LINE_BYTES,
    onLine: (l) => { handled += 1; if (!parseClientLine(l).ok) errors += 1; },
    onOversize: () => { handled += 1; },
  });
  const valid = [
    '{"hello":{"protocol":1}}',
    '{"id":1,"method":"send","params":{"responderId":"ur-agent","text":"hi"}}',
    '{"id":2,"method":"resolveApprovals","params":{"requestIds":["1"],"decision":"approved"}}',
  ];
  for (let i = 0; i < 3000; i++) {
    const pick = random();
    let chunk: Buffer;
    if (pick < 0.3) {
      chunk = Buffer.from(Array.from({ length: Math.floor(random() * 200) }, () => Math.floor(random() * 256)));
    } else if (pick < 0.6) {
      const base = valid[Math.floor(random() * valid.length)]!;
      chunk = Buffer.from(base.slice(0, Math.floor(random() * base.length)) + '\n');
    } else if (pick < 0.9) {
      // Wrong types in the right places.
      const values = [null, 1, -1, 'x', [], {}, true, 1e308, '__proto__'];
      const v = (): unknown => values[Math.floor(random() * values.length)];
      chunk = Buffer.from(JSON.stringify({ id: v(), method: METHODS[Math.floor(random() * METHODS.length)], params: { sessionId: v(), text: v(), requestIds: v(), decision: v() } }) + '\n');
    } else {
      chunk = Buffer.from(valid[Math.floor(random() * valid.length)]! + '\n');
    }
    reader.push(chunk);
    // Server lines too: the client parses whatever arrives.
    parseServerLine(chunk.toString('utf8'));
  }
  // A 10 MB line, in pieces: dropped, reported once, the next line still read.
  const big = Buffer.alloc(10 * 1024 * 1024, 0x61);
  let oversize = 0;
  let after = '';
  const r2 = createLineReader({ maxBytes: MAX_CLIENT_LINE_BYTES, onLine: (l) => { after = l; }, onOversize: () => { oversize += 1; } });
  for (let off = 0; off < big.length; off += 65536) r2.push(big.subarray(off, off + 65536));
  assert.ok(r2.buffered <= MAX_CLIENT_LINE_BYTES);
  r2.push(Buffer.from('\n{"hello":{"protocol":1}}\n'));
  assert.equal(oversize, 1);
  assert.equal(parseClientLine(after).ok, true);
  assert.ok(handled > 0 && errors > 0);
});

test('the fast path for event lines accepts what the schema accepts, and nothing more', () => {
  const ok = { event: { seq: 3, at: 'x', runId: 'r', type: 'text-delta', sessionId: 's', participantId: 'p', text: 'hi' } };
  const parsed = parseServerLine(JSON.stringify(ok));
  assert.deepEqual(parsed, { ok: true, message: { kind: 'event', event: ok.event } });
  for (const bad of [
    { event: { ...ok.event, seq: 0 } }, { event: { ...ok.event, seq: 1.5 } }, { event: { ...ok.event, runId: '' } },
    { event: { ...ok.event, type: 'rm' } }, { event: { ...ok.event, at: 1 } }, { event: ok.event, extra: 1 }, { event: [1] }, { event: null },
  ]) {
    assert.equal(parseServerLine(JSON.stringify(bad)).ok, false, JSON.stringify(bad));
  }
});

test('event bodies are checked by type: a missing or mistyped field is refused before a front end reads it', () => {
  const env = { seq: 9, at: '2026-01-01T00:00:00.000Z', runId: 'r' };
  const good = [
    { ...env, type: 'message-add', sessionId: 's', message: { role: 'assistant', content: [{ type: 'text', text: 'hi' }], at: 'x' } },
    { ...env, type: 'text-delta', sessionId: 's', participantId: 'p', text: 'hi', joined: 3 },
    { ...env, type: 'approval-request', requestId: '1', sessionId: 's', participantId: 'p', chain: ['user'], toolUseId: 't', toolName: 'file_write', input: { path: 'a' }, ruleId: null, approverId: 'user' },
    { ...env, type: 'approval-resolve', requestId: '1', decision: 'approved', decidedBy: 'remote:web', reason: '' },
    { ...env, type: 'agent-status', participantId: 'p', sessionId: 's', status: 'thinking' },
    { ...env, type: 'notice', level: 'warn', message: 'm', futureField: 1 },
    { ...env, type: 'workflow-end', workflowId: 'w', name: 'n', status: 'done', spentUsd: 0, failed: [], skipped: [] },
  ];
  for (const event of good) {
    const parsed = parseServerLine(JSON.stringify({ event }));
    assert.equal(parsed.ok, true, JSON.stringify(event));
    assert.deepEqual(parsed.ok && parsed.message.kind === 'event' && parsed.message.event, event);
  }
  const bad = [
    { ...env, type: 'message-add', sessionId: 's' },
    { ...env, type: 'message-add', sessionId: 's', message: { role: 'system', content: [], at: 'x' } },
    { ...env, type: 'text-delta', sessionId: 's', participantId: 'p', text: 5 },
    { ...env, type: 'text-delta', sessionId: '', participantId: 'p', text: 'x' },
    { ...env, type: 'text-delta', sessionId: 's', participantId: 'p', text: 'x', joined: -1 },
    { ...env, type: 'approval-request', requestId: '1', sessionId: 's', participantId: 'p', chain: 'user', toolUseId: 't', toolName: 'x', input: null, ruleId: null, approverId: 'user' },
    { ...env, type: 'approval-resolve', requestId: '1', decision: 'maybe', decidedBy: 'user', reason: '' },
    { ...env, type: 'agent-status', participantId: 'p', sessionId: 's', status: 'dancing' },
    { ...env, type: 'usage', sessionId: 's', participantId: 'p', model: 'm', inputTokens: '1', outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null },
    { ...env, type: 'notice', level: 'info' },
    { ...env, type: 'session-open', sessionId: 's', initiatorId: 'user', responderId: 5, name: 'default' },
  ];
  for (const event of bad) {
    const parsed = parseServerLine(JSON.stringify({ event }));
    assert.equal(parsed.ok, false, JSON.stringify(event));
    assert.match(!parsed.ok ? parsed.error : '', new RegExp(`^the server sent a bad line: a ${event.type} event \\(seq 9\\) is malformed: `));
  }
});
