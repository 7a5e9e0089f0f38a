import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { secretPathMatcher } from '../../../../src/tools/sandbox/secrets';

/**
 * `secretPathMatcher` reuses the expression of a pattern list it compiled before (a start
 * compiles its rules' list twice, and a start from the snapshot finds the shipped list compiled):
 * only for exactly the same list. A matcher answering for another list would leave a secret
 * path unhidden (docs/sandbox.md).
 */
test('secret matchers: each list gets its own expression, however the lists overlap or were met before', () => {
  const env = secretPathMatcher(['**/.env']);
  assert.equal(env('app/.env'), true);
  assert.equal(env('APP/.ENV'), true, 'case-insensitive');
  assert.equal(env('app/key.pem'), false);
  const both = secretPathMatcher(['**/.env', '**/*.pem']);
  assert.equal(both('app/key.pem'), true, 'a longer list sharing its first pattern is its own');
  assert.equal(both('app/.env'), true);
  const pem = secretPathMatcher(['**/*.pem']);
  assert.equal(pem('app/.env'), false);
  assert.equal(secretPathMatcher([])('app/.env'), false, 'no pattern matches nothing');
  // Lists that would join to the same text.
  assert.equal(secretPathMatcher(['**/a,**/b'])('x/b'), false);
  assert.equal(secretPathMatcher(['**/a', '**/b'])('x/b'), true);
  // Met again after many other lists: still right.
  for (let i = 0; i < 20; i++) assert.equal(secretPathMatcher([`**/secret-${i}`])(`d/secret-${i}`), true);
  assert.equal(secretPathMatcher(['**/.env', '**/*.pem'])('app/key.pem'), true);
  assert.equal(secretPathMatcher(['**/.env'])('app/key.pem'), false);
  // Matchers share an expression: a test keeps no state between calls.
  const again = secretPathMatcher(['**/.env']);
  for (let i = 0; i < 3; i++) assert.equal(again('a/.env') && env('b/.env'), true);
});
