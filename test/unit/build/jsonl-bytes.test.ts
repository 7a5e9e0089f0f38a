import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJsonl } from '../../../src/storage/jsonl';
import { createJsonlByteParser, parseJsonlBytes } from '../../../src/storage/jsonl-bytes';

const isObject = (v: unknown): { ok: true; value: object } | { ok: false; error: string } =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? { ok: true, value: v } : { ok: false, error: 'not an object' };

function same(text: string, label: string, chunk?: number): void {
  const bytes = Buffer.from(text, 'utf8');
  const want = parseJsonl(text, 'f.jsonl', isObject);
  const got = parseJsonlBytes(bytes, 'f.jsonl', isObject);
  assert.deepEqual({ records: got.records, issues: got.issues }, want, label);
  assert.equal(got.bytes, bytes.length);
  assert.equal(got.completeBytes, bytes.lastIndexOf(10) + 1, `${label}: completeBytes`);
  const plain = parseJsonlBytes(bytes, 'f.jsonl');
  assert.deepEqual({ records: plain.records, issues: plain.issues }, parseJsonl(text, 'f.jsonl'), `${label} (no validation)`);
  if (chunk) {
    // Fed in chunks of a reused buffer, as a file is read.
    const parser = createJsonlByteParser('f.jsonl', isObject);
    const reused = Buffer.alloc(chunk);
    for (let at = 0; at < bytes.length; at += chunk) {
      const n = bytes.copy(reused, 0, at, at + chunk);
      parser.push(reused.subarray(0, n));
      reused.fill(0x41);
    }
    const streamed = parser.end();
    assert.deepEqual({ records: streamed.records, issues: streamed.issues }, want, `${label} (chunks of ${chunk})`);
    assert.equal(streamed.completeBytes, got.completeBytes);
  }
}

test('parseJsonlBytes: the same records and issues as parseJsonl on the decoded text (edge cases)', () => {
  const cases: Record<string, string> = {
    empty: '',
    newline: '\n',
    one: '{"a":1}\n',
    'no final newline': '{"a":1}\n{"b":2}',
    'torn last line': '{"a":1}\n{"b":',
    'torn then blank lines': '{"a":1}\n{"b":\n\n  \n',
    'bad middle line': '{"a":1}\nnot json\n{"c":3}\n',
    'invalid record': '{"a":1}\n[1,2]\n{"c":3}\n',
    'blank and spaced lines': '\n\n  {"a":1}  \n\t\n{"b":2}\r\n',
    'unicode whitespace line': '{"a":1}\n\u00a0\u2003\n',
    'torn before unicode whitespace': '{"a":1}\n{"b\n\u00a0\n',
    'non-ASCII text': '{"t":"界 · é → 😀"}\n{"t":"ж"}\n',
    'invalid UTF-8': Buffer.from([0x7b, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xe2, 0x82, 0x22, 0x7d, 0x0a]).toString('latin1'),
  };
  for (const [label, text] of Object.entries(cases)) for (const chunk of [1, 2, 3, 7, 64]) same(text, label, chunk);
  // Invalid UTF-8 bytes, compared on the bytes themselves.
  const raw = Buffer.from([0x7b, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xe2, 0x82, 0x22, 0x7d, 0x0a, 0xff, 0x0a, 0x7b, 0x7d, 0x0a]);
  const fromBytes = parseJsonlBytes(raw, 'f.jsonl', isObject);
  assert.deepEqual({ records: fromBytes.records, issues: fromBytes.issues }, parseJsonl(raw.toString('utf8'), 'f.jsonl', isObject));
});

test('parseJsonlBytes: long files (many pieces, lines longer than a piece, multi-byte characters at piece edges)', () => {
  let seed = 3;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648);
  for (let round = 0; round < 6; round++) {
    const lines: string[] = [];
    for (let i = 0; i < 4000; i++) {
      const r = next() % 100;
      if (r < 2) lines.push('');
      else if (r < 3) lines.push('oops {');
      else if (r < 4) lines.push(JSON.stringify({ long: 'x'.repeat(60_000 + (next() % 50_000)) }));
      else lines.push(JSON.stringify({ i, t: '界'.repeat(next() % 40) + 'é'.repeat(next() % 7) + '😀'.repeat(next() % 3) }));
    }
    let text = lines.join('\n');
    if (round % 3 === 0) text += '\n';
    if (round % 3 === 1) text += '\n{"torn":';
    same(text, `round ${round}`, [1000, 4096, 65536, 100_000, 70_001, 333][round]);
  }
});

test('withoutYoungGrowth: gives back what the load returns, and its error', async () => {
  const { withoutYoungGrowth } = await import('../../../src/cli/young-generation');
  assert.equal(await withoutYoungGrowth(async () => 42), 42);
  await assert.rejects(withoutYoungGrowth(async () => { throw new Error('no run'); }), /no run/);
});
