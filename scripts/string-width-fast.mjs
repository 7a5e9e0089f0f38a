// Build-time patch of the `string-width` modules the bundle carries (Ink measures every piece
// of text with them). Loading string-width costs ~18 ms at every start: `new Intl.Segmenter()`
// (~7 ms of ICU set-up) and the `/^\p{RGI_Emoji}$/v` literal (~10 ms to validate, even unused).
// The patched module
// - creates the segmenter and the emoji expression at their first use, and
// - answers from a table for strings whose every UTF-16 unit is a BMP character that forms
//   its own grapheme cluster and has width 1 or 2 (ASCII, Latin, Greek, Cyrillic, box
//   drawing, arrows, CJK…); anything else (controls, combining marks, emoji, surrogates,
//   `ambiguousIsNarrow: false`) takes the module's own algorithm. Escape sequences are
//   stripped first, as the module does.
// The table is computed here from the very module being patched, character by character, so
// the fast answer is the module's own answer: a string of such characters is one cluster per
// character, and the module sums per cluster.
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cachedTable, neverJoinsTest, patchOnce } from './build-tables.mjs';

/** `widthRuns`, through the build cache (~0.5 s per module): keyed by module text and this file. */
function cachedWidthRuns(moduleFile, source) {
  return cachedTable('string-width', [source, readFileSync(fileURLToPath(import.meta.url))], () => widthRuns(moduleFile));
}

/** [first, last, width] runs of BMP characters the module measures as 1 or 2 and that never join a neighbour. */
export async function widthRuns(moduleFile) {
  const { default: stringWidth } = await import(pathToFileURL(moduleFile).href);
  const neverJoins = neverJoinsTest();
  const runs = [];
  for (let code = 0x20; code <= 0xffff; code++) {
    if (code >= 0xd800 && code <= 0xdfff) continue;
    const ch = String.fromCharCode(code);
    const width = stringWidth(ch);
    if ((width !== 1 && width !== 2) || !neverJoins(ch)) continue;
    const last = runs[runs.length - 1];
    if (last && last[1] === code - 1 && last[2] === width) last[1] = code;
    else runs.push([code, code, width]);
  }
  // Sanity: random strings of table characters measure the same both ways.
  const table = new Uint8Array(0x10000);
  for (const [a, b, w] of runs) table.fill(w, a, b + 1);
  const chars = runs.flatMap(([a, b]) => [a, b, (a + b) >> 1]);
  let seed = 1;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  for (let i = 0; i < 2000; i++) {
    let s = '';
    for (let n = next() % 12; n >= 0; n--) s += String.fromCharCode(chars[next() % chars.length]);
    let fast = 0;
    for (let k = 0; k < s.length; k++) fast += table[s.charCodeAt(k)];
    if (fast !== stringWidth(s)) throw new Error(`build: string-width fast path disagrees on ${JSON.stringify(s)} (${moduleFile})`);
  }
  return runs;
}

const FAST_PATH = (runs) => `
// Legion build patch (scripts/string-width-fast.mjs): table answers for strings of simple BMP characters.
const __legionWidths = (() => {
  const table = new Uint8Array(0x10000);
  const runs = ${JSON.stringify(runs)};
  for (const [first, last, width] of runs) table.fill(width, first, last + 1);
  return table;
})();
export default function stringWidth(input, options) {
  if (typeof input === 'string' && (options === undefined || ((options.ambiguousIsNarrow === undefined || options.ambiguousIsNarrow === true) && (options.countAnsiEscapeCodes === undefined || options.countAnsiEscapeCodes === false)))) {
    // As the module does: escape sequences do not count (every one starts with ESC or CSI).
    const text = input.includes('\\u001B') || input.includes('\\u009B') ? stripAnsi(input) : input;
    let width = 0;
    for (let i = 0; i < text.length; i++) {
      const w = __legionWidths[text.charCodeAt(i)];
      if (w === 0) return __legionFullStringWidth(input, options);
      width += w;
    }
    return width;
  }
  return __legionFullStringWidth(input, options);
}
`;

/** The patched source of a string-width `index.js` (versions 7 and 8). */
export async function patchStringWidth(file) {
  const original = readFileSync(file, 'utf8');
  let source = original;
  const what = `string-width (${file})`;
  source = patchOnce(
    source,
    'const segmenter = new Intl.Segmenter();',
    'let __legionSegmenter;\nconst segmenter = { segment: (s) => (__legionSegmenter ??= new Intl.Segmenter()).segment(s) };',
    what,
  );
  if (source.includes('const rgiEmojiRegex = /^\\p{RGI_Emoji}$/v;')) {
    source = patchOnce(
      source,
      'const rgiEmojiRegex = /^\\p{RGI_Emoji}$/v;',
      "let __legionRgiEmoji;\nconst rgiEmojiRegex = { test: (s) => (__legionRgiEmoji ??= new RegExp('^\\\\p{RGI_Emoji}$', 'v')).test(s) };",
      what,
    );
  }
  source = patchOnce(source, 'export default function stringWidth(', 'function __legionFullStringWidth(', what);
  if (!source.includes("import stripAnsi from 'strip-ansi';")) throw new Error(`build: cannot patch ${what}: it no longer imports stripAnsi`);
  return source + FAST_PATH(await cachedWidthRuns(file, original));
}
