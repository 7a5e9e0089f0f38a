import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderTemplate, templateRefs } from '../../../src/workflows/template';
import { nextMoves } from '../../../src/workflows/graph';

test('renderTemplate fills input, inputs and step outputs (spaces allowed); values are not re-expanded', () => {
  const out = renderTemplate('A {{input}} B {{ inputs.x }} C {{steps.s1.output}} D', { input: 'in {{input}}', inputs: { x: 'ex' }, outputs: { s1: 'one' } });
  assert.equal(out, 'A in {{input}} B ex C one D');
});

test('templateRefs lists every placeholder, unknown forms as null', () => {
  assert.deepEqual(templateRefs('{{input}} {{steps.a.output}} {{nope}} {{steps.a}}').map((r) => r.variable), [
    { kind: 'input' }, { kind: 'step', id: 'a' }, null, null,
  ]);
});

test('nextMoves: ready when every after is done; skipped (with the blocker) when one failed, was cancelled or skipped', () => {
  const steps = [
    { id: 'a', after: [] }, { id: 'b', after: [] }, { id: 'c', after: ['a'] }, { id: 'd', after: ['a', 'b'] }, { id: 'e', after: ['c'] },
  ];
  const status = (table: Record<string, string>) => (id: string) => (table[id] ?? 'pending') as never;
  assert.deepEqual(nextMoves(steps, status({})), { ready: ['a', 'b'], skip: [] });
  assert.deepEqual(nextMoves(steps, status({ a: 'done', b: 'running' })), { ready: ['c'], skip: [] });
  assert.deepEqual(nextMoves(steps, status({ a: 'done', b: 'failed', c: 'running' })), { ready: [], skip: [{ id: 'd', because: 'b' }] });
  assert.deepEqual(nextMoves(steps, status({ a: 'cancelled', b: 'done' })), { ready: [], skip: [{ id: 'c', because: 'a' }, { id: 'd', because: 'a' }] });
  assert.deepEqual(nextMoves(steps, status({ a: 'cancelled', b: 'done', c: 'skipped', d: 'skipped' })), { ready: [], skip: [{ id: 'e', because: 'c' }] });
});
