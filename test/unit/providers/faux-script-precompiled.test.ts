import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseFauxScript, precompileShippedFauxScript } from '../../../src/providers/faux-script';

/**
 * The shipped demo script parsed while the start-up snapshot builds (src/cli/snapshot-warm.ts),
 * with schemas that are not kept: a load of exactly its text gets a copy of that parse; any other
 * text is parsed by the schemas built at their first use, with the same results and errors
 * (docs/performance.md#the-start-up-snapshot).
 */
const SHIPPED = readFileSync(fileURLToPath(new URL('../../../config/demo-script.yaml', import.meta.url)), 'utf8');

test('precompiled demo script: the same text gives what a parse gives, a copy per load, with the caller\'s file', () => {
  const fresh = parseFauxScript(SHIPPED, 'a.yaml');
  assert.ok(fresh.ok);
  assert.equal(precompileShippedFauxScript(SHIPPED, 'config/demo-script.yaml'), true);
  const first = parseFauxScript(SHIPPED, '/app/config/demo-script.yaml');
  const second = parseFauxScript(SHIPPED, '/app/config/demo-script.yaml');
  assert.ok(first.ok && second.ok);
  assert.deepEqual({ ...first.script, file: 'a.yaml' }, fresh.script);
  assert.equal(first.script.file, '/app/config/demo-script.yaml');
  assert.notEqual(first.script.replies, second.script.replies, 'each load gets its own script');
  assert.ok(!Object.isFrozen(first.script.replies[0]), 'a copy, as a parse gives');
  (first.script.replies as unknown[]).length = 0;
  (second.script.defaults as { chunkSize?: number }).chunkSize = 999;
  const third = parseFauxScript(SHIPPED, 'b.yaml');
  assert.ok(third.ok);
  assert.deepEqual({ ...third.script, file: 'a.yaml' }, fresh.script, 'a load changing its script does not change the next');
});

test('precompiled demo script: another text is parsed by the schemas built at first use (defaults, errors with their line)', () => {
  assert.equal(precompileShippedFauxScript(SHIPPED, 'config/demo-script.yaml'), true);
  const edited = parseFauxScript(SHIPPED.replace('chunkSize: 8', 'chunkSize: 9'), 'edited.yaml');
  assert.ok(edited.ok);
  assert.equal(edited.script.defaults.chunkSize, 9);
  const small = parseFauxScript('replies:\n  - text: hi\n    toolCalls:\n      - name: file_read\n', 's.yaml');
  assert.ok(small.ok);
  assert.deepEqual(small.script.replies[0], { text: 'hi', toolCalls: [{ name: 'file_read', input: {} }] });
  const bad = parseFauxScript('replies:\n  - text: a\n    when: "(unclosed"\n', 's.yaml');
  assert.equal(bad.ok, false);
  if (!bad.ok) assert.match(bad.error, /^s\.yaml:3: replies\.0\.when: not a valid regular expression/);
  assert.equal(precompileShippedFauxScript('replies:\n  - agent: x\n', 'broken.yaml'), false, 'a shipped script that does not parse fails the build');
});
