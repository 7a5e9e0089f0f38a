import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import micromatch from 'micromatch';
import { anyGlob, compilePathGlob, pathGlobSuffix, regexEndsWith } from '../../../../src/authz/rules/glob';
import { requiredTextOf } from '../../../../src/authz/rules/required-text';
import { prng } from '../../../helpers/prng';

/**
 * A path glob's matcher first checks the literal text every match ends with (glob.ts
 * `pathGlobSuffix`), skipping the regex when the value ends otherwise. Its one property: the
 * guarded matcher says exactly what micromatch's regex says (a guard that said no where the
 * regex says yes would let a path past a deny rule).
 */
const SEED = Number(process.env.LEGION_PROPERTY_SEED ?? 20261127);
const ITERATIONS = Number(process.env.LEGION_PROPERTY_ITERATIONS ?? 300);

test('the suffixes read from common globs', () => {
  const cases: [string, string][] = [
    ['src/**/*.ts', '.ts'],
    ['docs/readme.md', 'docs/readme.md'],
    ['**/x.md', 'x.md'],
    ['**/.env', '.env'],
    ['a/**/b/c.md', 'b/c.md'],
    ['docs/**', ''],
    ['**/src-20/**', ''],
    ['*.{md,ts}', ''],
    ['a/@(x|y).md', '.md'],
    ['!(x).md', ''],
    ['!docs/*.md', ''],
    ['a\\*.md', ''],
    ['a/b/', ''],
    ['*', ''],
  ];
  for (const [glob, suffix] of cases) assert.equal(pathGlobSuffix(glob), suffix, glob);
});

test('a suffix is used only where the regex itself ends with it outside any alternation or lookaround', () => {
  const re = (glob: string): string => micromatch.makeRe(glob, { dot: true }).source;
  assert.equal(regexEndsWith(re('src/**/*.ts'), '.ts'), true);
  assert.equal(regexEndsWith(re('*.md'), '.md'), true); // then `\/?`
  assert.equal(regexEndsWith(re('a/b-c.md'), 'a/b-c.md'), true);
  assert.equal(regexEndsWith(re('***(a)..'), '..'), false); // micromatch leaves the last `.` unescaped
  assert.equal(regexEndsWith('^(?:a|b\\.md)$', '.md'), false);
  assert.equal(regexEndsWith('^(?:x)$|^(?:b\\.md)$', '.md'), false);
  assert.equal(regexEndsWith('^(?:a(?!b\\.md))$', '.md'), false);
  assert.equal(regexEndsWith('^(?:(?:a\\.md)?)$', '.md'), false);
  assert.equal(regexEndsWith('^(?:a[x.md])$', '.md'), false);
  assert.equal(regexEndsWith('^(?:a\\\\.md)$', '.md'), false); // `\\` then any character
});

test('a value ending otherwise is rejected without the regex; one trailing slash and case (strict rules) as micromatch reads them', () => {
  const exact = compilePathGlob('docs/**/*.md', false);
  const strict = compilePathGlob('docs/**/*.md', true);
  assert.ok(exact.ok && strict.ok);
  assert.equal(exact.test('docs/a/b.md'), true);
  assert.equal(exact.test('docs/a/b.md.v1'), false);
  assert.equal(exact.test('docs/a/b.MD'), false);
  assert.equal(strict.test('DOCS/a/B.MD'), true);
  const star = compilePathGlob('*.md', false);
  assert.ok(star.ok);
  assert.equal(star.test('a.md/'), micromatch.makeRe('*.md', { dot: true }).test('a.md/'));
  // The rule index still reads the required text of a guarded matcher.
  assert.deepEqual(requiredTextOf(anyGlob([exact])), ['docs']);
});

test('a list of globs runs no regex on a value each glob\'s own guard rejects (its suffix, its literal)', () => {
  const md = compilePathGlob('docs/**/*.md', false);
  const named = compilePathGlob('**/src-1/**', false);
  assert.ok(md.ok && named.ok);
  const list = anyGlob([md, named]);
  const exec = RegExp.prototype.exec;
  let runs = 0;
  RegExp.prototype.exec = function (this: RegExp, value: string) {
    runs++;
    return exec.call(this, value);
  };
  try {
    // Holds `docs` (the first glob's literal) but ends otherwise than `.md`, and lacks `src-1`.
    assert.equal(list('docs/a.json'), false);
    assert.equal(runs, 0);
    assert.equal(list('docs/x/y.md'), true);
    assert.equal(list('lib/src-1/z.ts'), true);
  } finally {
    RegExp.prototype.exec = exec;
  }
  // The rule index reads one literal of each glob.
  assert.deepEqual([...requiredTextOf(list)!].sort(), [...requiredTextOf(md.test)!, ...requiredTextOf(named.test)!].sort());
});

/** Pieces of a glob, each with text it matches (for values that do match). */
const PIECES: readonly [string, readonly string[]][] = [
  ['a', ['a']], ['b', ['b']], ['x.md', ['x.md']], ['.md', ['.md']], ['.', ['.']], ['-', ['-']], ['_', ['_']], ['/', ['/']],
  ['A', ['A']], ['MD', ['MD']], ['..', ['..']],
  ['*', ['', 'a', 'ab', 'x.md', '.a', 'B']], ['**', ['', 'a', 'a/b', 'x.md/a', '.a/b']], ['?', ['a', '.']],
  ['[ab]', ['b']], ['[!a]', ['c']], ['{a,b}', ['a', 'b']], ['{a,b.md}', ['b.md', 'a']], ['{1..3}', ['2']],
  ['@(a|b)', ['b']], ['!(a)', ['b', '']], ['+(a)', ['aa']], ['*(a)', ['', 'a']], ['?(a)', ['', 'a']],
];

test('property: the guarded matcher equals micromatch on generated globs and values', () => {
  const random = prng(SEED);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  const noise = 'abmdxAMD./-_';
  let positives = 0;
  for (let n = 0; n < ITERATIONS; n++) {
    const pieces = Array.from({ length: 1 + Math.floor(random() * 5) }, () => pick(PIECES));
    const glob = pieces.map(([g]) => g).join('');
    for (const strict of [false, true]) {
      const compiled = compilePathGlob(glob, strict);
      const other = compilePathGlob('zz/*.q', strict);
      if (!compiled.ok || !other.ok) continue;
      const values: string[] = [];
      for (let k = 0; k < 20; k++) {
        let value = pieces.map(([, texts]) => pick(texts)).join('');
        if (random() < 0.2) value += '/';
        if (strict && random() < 0.3) value = value.toUpperCase();
        values.push(value);
        values.push(Array.from({ length: Math.floor(random() * 8) }, () => pick([...noise])).join(''));
      }
      for (const value of values) {
        const expected = compiled.re.test(value);
        if (expected) positives++;
        assert.equal(compiled.test(value), expected, `glob ${JSON.stringify(glob)} (strict ${strict}) on ${JSON.stringify(value)}`);
        assert.equal(anyGlob([compiled, other])(value), expected || other.re.test(value), `a list with ${JSON.stringify(glob)} on ${JSON.stringify(value)}`);
      }
    }
  }
  assert.ok(positives > ITERATIONS, `the generator makes matching values (${positives})`);
});
