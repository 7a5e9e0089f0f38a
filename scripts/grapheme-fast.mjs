// Build-time patch of @alcalzone/ansi-tokenize and slice-ansi (Ink tokenizes and slices every
// line of every frame with them): each module creates `new Intl.Segmenter(undefined, { granularity: 'grapheme' })` as it
// loads (ICU's break rules, ~10 ms of a start) and splits every string with it. The patched
// module splits a string whose every UTF-16 unit is a "simple" character (one that never
// joins a neighbour into a grapheme cluster: ASCII, Latin, box drawing, arrows, CJK…) one
// unit per segment, which is what the segmenter answers for such a string, and creates the
// segmenter at the first string that has any other character (combining marks, emoji,
// surrogates, Hangul jamo, CR).
// The table is computed here from ICU itself (cached by Node version and this file).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cachedTable, neverJoinsTest, patchOnce } from './build-tables.mjs';

/**
 * [first, last] runs of BMP code units that split from any neighbour of the set: controls
 * other than CR (CR joins a following LF), and characters that join neither an ASCII letter
 * nor themselves, before or after (so not Extend, ZWJ, SpacingMark, Prepend, a regional
 * indicator or a Hangul L, V or T jamo: the only characters that join others).
 */
export function simpleRuns() {
  const neverJoins = neverJoinsTest();
  const runs = [];
  for (let code = 0; code <= 0xffff; code++) {
    if (code >= 0xd800 && code <= 0xdfff) continue;
    const ch = String.fromCharCode(code);
    if (code === 0x0d || !neverJoins(ch)) continue;
    const last = runs[runs.length - 1];
    if (last && last[1] === code - 1) last[1] = code;
    else runs.push([code, code]);
  }
  return runs;
}

/** `simpleRuns`, through the build cache. */
function cachedSimpleRuns() {
  return cachedTable('graphemes', [readFileSync(fileURLToPath(import.meta.url))], simpleRuns);
}

/**
 * The source of `const <name> = …`: a grapheme Intl.Segmenter's `segment` (iterable, with
 * `containing(index)`), with the fast split.
 */
export function fastSegmenterSource(runs, name = 'segmenter') {
  return `// Legion build patch (scripts/grapheme-fast.mjs): one segment per unit for strings of simple characters.
const __legionSimple = (() => {
  const table = new Uint8Array(0x10000);
  for (const [first, last] of ${JSON.stringify(runs)}) table.fill(1, first, last + 1);
  return table;
})();
let __legionGraphemes;
class __LegionUnits {
  constructor(input) { this.input = input; }
  containing(index = 0) {
    const i = Math.trunc(Number(index)) || 0;
    return i >= 0 && i < this.input.length ? { segment: this.input[i], index: i, input: this.input } : undefined;
  }
  *[Symbol.iterator]() {
    const input = this.input;
    for (let index = 0; index < input.length; index++) yield { segment: input[index], index, input };
  }
}
const ${name} = {
  segment(s) {
    s = String(s);
    for (let i = 0; i < s.length; i++) {
      if (__legionSimple[s.charCodeAt(i)] === 0) return (__legionGraphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' })).segment(s);
    }
    return new __LegionUnits(s);
  },
};`;
}

/** The patched source of slice-ansi's `tokenize-ansi.js` (the same segmenter; it also uses `containing`). */
export async function patchSliceAnsi(file) {
  return patchOnce(
    readFileSync(file, 'utf8'),
    "const GRAPHEME_SEGMENTER = new Intl.Segmenter(undefined, {granularity: 'grapheme'});",
    fastSegmenterSource(await cachedSimpleRuns(), 'GRAPHEME_SEGMENTER'),
    `slice-ansi (${file})`,
  );
}

/** The patched source of ansi-tokenize's `build/tokenize.js`. */
export async function patchAnsiTokenize(file) {
  return patchOnce(
    readFileSync(file, 'utf8'),
    'const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });',
    fastSegmenterSource(await cachedSimpleRuns()),
    `ansi-tokenize (${file})`,
  );
}
