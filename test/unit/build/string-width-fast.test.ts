import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
// @ts-expect-error: a build script (plain JS, no types)
import { patchStringWidth } from '../../../scripts/string-width-fast.mjs';

type StringWidth = (s: unknown, options?: { ambiguousIsNarrow?: boolean; countAnsiEscapeCodes?: boolean }) => number;

/** The string-width modules the bundle carries (Ink's and wrap-ansi's). */
const MODULES = [resolve('node_modules/string-width/index.js'), resolve('node_modules/wrap-ansi/node_modules/string-width/index.js')];

/** Strings of every kind: ASCII, Latin, CJK, box drawing, ANSI styles, emoji (ZWJ, flags, VS16), combining marks, Hangul jamo, controls. */
function corpus(): string[] {
  const pieces = [
    'a', 'Z', ' ', '~', '·', '—', '…', '→', '─', '│', '╭', 'é', 'ß', 'Ж', 'λ', '界', '漢', 'ｶ', 'Ａ', '가', '\u1100', '\u1161', '\u11a8',
    '\u0301', '\u200d', '\u200b', '\ufe0f', '©', '®', '™', '☺', '⌚', '😀', '👩\u200d💻', '🇫🇷', '1\ufe0f\u20e3', '\t', '\n', '\x07', '\x7f',
    '\x1b[31m', '\x1b[39m', '\x1b[1;7m', '\x1b[0m', '\x1b]8;;http://x\x07', '\x1b]8;;\x07', '\x9b1m', '\ud800', '\udc00', '\u00ad', '\u0600',
  ];
  const out = [...pieces, '', 'plain ascii text', 'legion · run 2026 · DEMO · 0 tok $0', '\x1b[36;1m▶ user → ur-agent · default\x1b[0m'];
  let seed = 7;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648);
  for (let i = 0; i < 3000; i++) {
    let s = '';
    for (let n = next() % 10; n >= 0; n--) s += pieces[next() % pieces.length];
    out.push(s);
  }
  return out;
}

test('string-width fast path: the patched modules measure every string as the originals do', async () => {
  const dir = mkdtempSync(join(resolve('node_modules/.cache'), 'legion-sw-test-'));
  try {
    for (const [i, file] of MODULES.entries()) {
      // Next to node_modules, so the patched module's own imports (strip-ansi…) resolve.
      const patchedFile = join(dir, `sw${i}.mjs`);
      writeFileSync(patchedFile, (await patchStringWidth(file)) as string);
      const original = (await import(pathToFileURL(file).href)).default as StringWidth;
      const patched = (await import(pathToFileURL(patchedFile).href)).default as StringWidth;
      for (const s of corpus()) {
        for (const options of [undefined, {}, { ambiguousIsNarrow: false }, { countAnsiEscapeCodes: true }, { ambiguousIsNarrow: true }]) {
          assert.equal(patched(s, options), original(s, options), `${file}: ${JSON.stringify(s)} ${JSON.stringify(options)}`);
        }
      }
      assert.equal(patched(42), original(42));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('string-width fast path: a module that no longer has the patched code fails the build', async () => {
  const dir = mkdtempSync(join(resolve('node_modules/.cache'), 'legion-sw-test-'));
  try {
    const file = join(dir, 'index.js');
    writeFileSync(file, "import stripAnsi from 'strip-ansi';\nexport default function stringWidth(s) { return s.length; }\n");
    await assert.rejects(patchStringWidth(file), /cannot patch string-width/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
