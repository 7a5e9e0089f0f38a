import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderTranscript, transcriptLines } from '../../../src/session/transcript';
import type { ContextRecord } from '../../../src/context/records';
import { assistant, user } from './helpers';
import { keyArgumentOf } from '../../../src/collective/tools/shipped';

const key = { initiatorId: 'user', responderId: 'coder', name: 'default' };
const messages = [user('one'), assistant('two'), user('three'), assistant('four'), user('five'), assistant('six')];
const records: ContextRecord[] = [
  { type: 'eviction', at: '2026-01-01T00:00:00.000Z', before: 2, tokensBefore: 900, tokensAfter: 800 },
  { type: 'compaction', at: '2026-01-01T00:00:00.000Z', summary: 'S1', firstKept: 2, tokensBefore: 48_000, tokensAfter: 9_000 },
  { type: 'compaction', at: '2026-01-01T00:00:00.000Z', summary: 'S2', firstKept: 4, tokensBefore: 30_000, tokensAfter: 8_000 },
];

test('transcripts (legion show, history browser) show every message with each compaction point marked', () => {
  const text = renderTranscript(key, messages, keyArgumentOf, records);
  for (const word of ['one', 'two', 'three', 'four', 'five', 'six']) assert.match(text, new RegExp(`  ${word}\\n`));
  const marks = transcriptLines(key, messages, keyArgumentOf, records).filter((l) => l.kind === 'mark');
  assert.equal(marks.length, 2);
  assert.match(marks[0]!.text, /^── compaction .*: messages 0–1 summarized for the model · 48k → 9k tokens ──$/);
  assert.equal(marks[0]!.messageIndex, 2);
  assert.match(marks[1]!.text, /messages 2–3 summarized .* 30k → 8k tokens/);
  // The mark stands right before the first kept message.
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.startsWith('── compaction') && l.includes('0–1'));
  assert.match(lines.slice(at + 1, at + 4).join('\n'), /user · .*\n  three/);
  assert.equal(renderTranscript(key, messages, keyArgumentOf), renderTranscript(key, messages, keyArgumentOf, []));
});
