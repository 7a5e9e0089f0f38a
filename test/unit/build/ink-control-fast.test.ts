import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
// @ts-expect-error: a build script (plain JS, no types)
import { FAST_HAS_CONTROL, INK_HAS_CONTROL } from '../../../scripts/ink-control-fast.mjs';
import { hasAnsiControlCharacters as inks } from '../../../node_modules/ink/build/ansi-tokenizer.js';

/** The patched function, as the bundle has it. */
const fast = new Function(`${(FAST_HAS_CONTROL as string).replace(/^export /, '')}\nreturn hasAnsiControlCharacters;`)() as (text: string) => boolean;

test('ink control-character patch: the build patches the text Ink ships (the patch would fail the build otherwise)', () => {
  const source = readFileSync(resolve('node_modules/ink/build/ansi-tokenizer.js'), 'utf8');
  assert.ok(source.includes(INK_HAS_CONTROL as string), 'Ink\'s hasAnsiControlCharacters is the one the patch replaces');
});

test('ink control-character patch: the same answer as Ink\'s own function for every kind of text', () => {
  const pieces = ['hello', ' ', '\x1b[31m', '\x1b', '\x1b]8;;https://x\x07', '\u0080', '\u009b', '\u009f', '\u00a0', '\u007f', 'é', '漢字', '👍', '👨‍👩‍👧', '\ud83d', '\udc4d', '\ud800\u0080', '\u0090\ud83d', '\n', '\t', '\x00', '\u2028', '\ufeff'];
  for (const p of pieces) assert.equal(fast(p), inks(p), JSON.stringify(p));
  let seed = 11;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  for (let i = 0; i < 20_000; i++) {
    let text = '';
    for (let n = next() % 6; n > 0; n--) text += next() % 4 === 0 ? String.fromCharCode(next() % 0x10000) : pieces[next() % pieces.length];
    assert.equal(fast(text), inks(text), JSON.stringify(text));
  }
  // Every single UTF-16 unit, alone and after a high surrogate.
  for (let code = 0; code <= 0xffff; code++) {
    const c = String.fromCharCode(code);
    assert.equal(fast(c), inks(c), code.toString(16));
    assert.equal(fast(`\ud83d${c}`), inks(`\ud83d${c}`), `d83d ${code.toString(16)}`);
  }
});
