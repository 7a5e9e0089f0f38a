import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { transformSync } from 'esbuild';

/**
 * The code a shell decision runs makes no function with an inferred name per call
 * (docs/rules.md#performance): under tsx (the rules bench, the tests) esbuild's keepNames
 * wraps each one in `__name`, an Object.defineProperty per closure per decision, which cost
 * a new shell decision about a fifth of its time. Module-level functions, class methods,
 * arrows assigned to a property and anonymous arrows passed as arguments are not wrapped; a
 * class's own name is set once (`static { __name(this, …) }`).
 */
// (prefix-index.ts names a helper while it builds an index, once per rule list.)
const HOT_FILES = ['evaluate.ts', 'shell-plain.ts', 'shell-split.ts', 'shell-views.ts', 'shell-read-only.ts'];

function namedPerCall(source: string): string[] {
  const code = transformSync(source, { loader: 'ts', keepNames: true, format: 'esm' }).code;
  return code
    .split('\n')
    .filter((line) => /^\s+/.test(line) && line.includes('__name(') && !/^\s+__name\(this, "\w+"\);$/.test(line))
    .map((line) => line.trim());
}

test('a decision makes no named closure: nothing in the hot files is wrapped in __name inside a function', () => {
  for (const file of HOT_FILES) {
    assert.deepEqual(namedPerCall(readFileSync(new URL(`../../../../src/authz/rules/${file}`, import.meta.url), 'utf8')), [], file);
  }
});

test('the check sees a closure with an inferred name (so it can fail)', () => {
  assert.equal(namedPerCall('export function f(x: number) { const g = (y: number) => x + y; return g(1); }').length, 1);
  assert.equal(namedPerCall('export function f(x: number) { return { g: (y: number) => x + y }; }').length, 1);
  assert.deepEqual(namedPerCall('export class C { m() { return [1].map((y) => y); } }'), []);
});
