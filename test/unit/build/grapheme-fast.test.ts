import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
// @ts-expect-error: a build script (plain JS, no types)
import { fastSegmenterSource, simpleRuns } from '../../../scripts/grapheme-fast.mjs';

type Segment = { segment: string; index: number; input: string };
type Segmenter = { segment(s: string): Iterable<Segment> & { containing(index: number): Segment | undefined } };

/** The patched module's `segmenter` (scripts/grapheme-fast.mjs), built as the bundle builds it. */
function fastSegmenter(): Segmenter {
  return new Function(`${fastSegmenterSource(simpleRuns()) as string}\nreturn segmenter;`)() as Segmenter;
}

const ICU = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const split = (s: Segmenter | Intl.Segmenter, text: string) => [...s.segment(text)].map(({ segment, index, input }) => ({ segment, index, input }));
/** `containing` at every index, and just outside (slice-ansi uses it). */
const containing = (s: Segmenter | Intl.Segmenter, text: string) => {
  const segments = s.segment(text);
  return Array.from({ length: text.length + 2 }, (_, i) => segments.containing(i - 1)).map((c) => c && { segment: c.segment, index: c.index, input: c.input });
};

/** Text of every kind Ink draws: ASCII, ANSI styles and links, Latin, box drawing, arrows, CJK, CR LF, emoji (ZWJ, flags, VS16), combining marks, Hangul jamo, controls. */
const PIECES = ['hello', ' ', '\x1b[31m', '\x1b[0m', '\x1b]8;;https://x.y\x07link\x1b]8;;\x07', 'é', 'e\u0301', '─│╭╮', '→ ▶ · … — ›', '漢字', '한국어', '\u1100\u1161\u11a8', '\r\n', '\r', '\n', '\t', '👍', '👨‍👩‍👧', '🇫🇷', '❤️', '\u0915\u094d\u0937', '\u200d', '\ufe0f', '\u00ad', 'ﾃｽﾄ', '\ud83d', '\x00', '\x7f'];

test('ansi-tokenize and slice-ansi patch: the fast split is ICU\'s grapheme split for every kind of text, iterated or by `containing`', () => {
  const fast = fastSegmenter();
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  for (const piece of PIECES) {
    assert.deepEqual(split(fast, piece), split(ICU, piece), JSON.stringify(piece));
    assert.deepEqual(containing(fast, piece), containing(ICU, piece), JSON.stringify(piece));
  }
  for (let i = 0; i < 3000; i++) {
    let text = '';
    for (let n = next() % 8; n >= 0; n--) text += PIECES[next() % PIECES.length];
    assert.deepEqual(split(fast, text), split(ICU, text), JSON.stringify(text));
    assert.deepEqual(containing(fast, text), containing(ICU, text), JSON.stringify(text));
  }
});

test('ansi-tokenize and slice-ansi patch: the first frame\'s characters are split without ICU; any other character takes ICU', () => {
  const runs = simpleRuns() as [number, number][];
  const simple = (c: string) => runs.some(([a, b]) => c.charCodeAt(0) >= a && c.charCodeAt(0) <= b);
  for (const c of 'az09 ~\x1b\n\t─│▶→·…—›é漢') assert.ok(simple(c), `${JSON.stringify(c)} is split without ICU`);
  for (const c of ['\r', '\u0301', '\u200d', '\ufe0f', '\u1100', '\u1161', '\ud83d', '\u094d']) assert.ok(!simple(c), `${JSON.stringify(c)} takes ICU`);
  // ICU's own Segments object only for text with other characters.
  const fast = fastSegmenter();
  assert.equal(fast.segment('plain ─ text').constructor.name, '__LegionUnits');
  assert.equal(Object.getPrototypeOf(fast.segment('e\u0301')), Object.getPrototypeOf(ICU.segment('x')));
});
