import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyRecord, EMPTY_CONTEXT, isContextLine, stateOf, validateContextRecord } from '../../../src/context/records';
import { isOverflowError } from '../../../src/context/overflow';
import { readFileSync } from 'node:fs';

test('records: a compaction sets summary and firstKept; an eviction only moves evictBefore; indexes are clamped', () => {
  const s1 = applyRecord(EMPTY_CONTEXT, { type: 'eviction', at: 't', before: 5, tokensBefore: 9, tokensAfter: 3 }, 10);
  assert.deepEqual(s1, { summary: null, firstKept: 0, evictBefore: 5, compactions: 0 });
  const s2 = applyRecord(s1, { type: 'compaction', at: 't', summary: 'S', firstKept: 7, tokensBefore: 9, tokensAfter: 2 }, 10);
  assert.deepEqual(s2, { summary: 'S', firstKept: 7, evictBefore: 7, compactions: 1 });
  // A hand-edited record pointing past the history is clamped; firstKept never moves back.
  const s3 = stateOf([{ type: 'compaction', at: 't', summary: 'A', firstKept: 50, tokensBefore: 1, tokensAfter: 1 }, { type: 'compaction', at: 't', summary: 'B', firstKept: 2, tokensBefore: 1, tokensAfter: 1 }], 10);
  assert.deepEqual(s3, { summary: 'B', firstKept: 10, evictBefore: 10, compactions: 2 });
});

test('records: validated at the boundary with a one-line reason', () => {
  assert.ok(isContextLine({ type: 'compaction' }));
  assert.ok(!isContextLine({ role: 'user' }));
  const bad = validateContextRecord({ type: 'compaction', at: 't', summary: 'x', firstKept: -1, tokensBefore: 0, tokensAfter: 0 });
  assert.ok(!bad.ok && /^not a context record: firstKept: /.test(bad.error), JSON.stringify(bad));
  assert.ok(validateContextRecord({ type: 'eviction', at: 't', before: 3, tokensBefore: 0, tokensAfter: 0 }).ok);
});

test('overflow: the vendors\' exact "prompt is too long" bodies are recognised; other 400s are not', () => {
  const anthropic = JSON.parse(readFileSync('test/fixtures/vendor/anthropic/error-400-prompt-too-long.json', 'utf8'));
  const openai = JSON.parse(readFileSync('test/fixtures/vendor/openai/error-400-context-length-exceeded.json', 'utf8'));
  assert.ok(isOverflowError({ status: 400, message: `anthropic: 400 ${anthropic.error.type}: ${anthropic.error.message}` }));
  assert.ok(isOverflowError({ status: 400, message: `openai: 400 ${openai.error.type}: ${openai.error.message}` }));
  assert.ok(!isOverflowError({ status: 400, message: 'anthropic: 400 invalid_request_error: messages.0.content: Field required' }));
  assert.ok(!isOverflowError({ status: 429, message: 'rate limit: prompt is too long' }));
});
