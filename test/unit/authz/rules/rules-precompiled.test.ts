import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseRuleSources, precompileShippedRules } from '../../../../src/authz/rules/load';
import { decide, shell, SHIPPED_RULES } from '../../../helpers/rules';

/**
 * The shipped rules compiled while the start-up snapshot builds (src/cli/snapshot-warm.ts) are
 * reused only for exactly their text: an edited file is compiled as it is, and a layer that may
 * only tighten still drops what it must (docs/performance.md#the-start-up-snapshot).
 */
const TEXT = `version: 1
defaults: { unmatched: ask }
rules:
  - id: read-all
    decision: allow
    tool: "file_read|grep"
  - id: env-files
    decision: deny
    tool: file_read
    match: { path: "**/.env" }
`;

const load = (text: string, file: string, tightenOnly = false) => {
  const loaded = parseRuleSources([{ file, text, ...(tightenOnly ? { tightenOnly } : {}) }]);
  if (!loaded.ok) throw new Error(loaded.error);
  return loaded.ruleSet;
};

test('precompiled rules: the same text decides as a fresh compile does, and names the file the start loaded', () => {
  const fresh = load(TEXT, '/app/config/rules.yaml');
  assert.equal(precompileShippedRules(TEXT, 'config/rules.yaml'), true);
  const reused = load(TEXT, '/app/config/rules.yaml');
  for (const [tool, input] of [['file_read', { path: 'a.ts' }], ['file_read', { path: 'x/.env' }], ['grep', { pattern: 'x' }], ['shell', { command: 'ls' }]] as const) {
    assert.deepEqual(decide(reused, tool, input), decide(fresh, tool, input), `${tool} ${JSON.stringify(input)}`);
  }
  assert.deepEqual(reused.rules.map((r) => [r.id, r.file, r.line]), fresh.rules.map((r) => [r.id, r.file, r.line]));
  assert.equal(reused.unmatched, 'ask');
  // Reused, not compiled again: the same matcher functions for every load of that text.
  assert.equal(load(TEXT, '/elsewhere.yaml').rules[0]!.matchesTool, reused.rules[0]!.matchesTool);
  assert.notEqual(load(`${TEXT}\n`, '/x.yaml').rules[0]!.matchesTool, load(`${TEXT}\n`, '/x.yaml').rules[0]!.matchesTool);
});

test('precompiled rules: an edited text is compiled as it is (a deny added to the shipped file applies)', () => {
  precompileShippedRules(TEXT, 'config/rules.yaml');
  const edited = `${TEXT}  - id: no-ls
    decision: deny
    tool: shell
    match: { command: "ls*" }
`;
  const ruleSet = load(edited, '/app/config/rules.yaml');
  assert.equal(shell(ruleSet, 'ls -la').decision, 'deny');
  assert.equal(shell(ruleSet, 'ls -la').ruleId, 'no-ls');
});

test('precompiled rules: a layer that may only tighten drops its allow rules and defaults, reused or not', () => {
  precompileShippedRules(TEXT, 'config/rules.yaml');
  const ruleSet = load(TEXT, '/ws/.legion/rules.yaml', true);
  assert.deepEqual(ruleSet.rules.map((r) => r.id), ['env-files']);
  assert.equal(decide(ruleSet, 'file_read', { path: 'a.ts' }).decision, null);
});

test('precompiled rules: the shipped config/rules.yaml decides the same through the kept compilation', () => {
  const text = readFileSync(SHIPPED_RULES, 'utf8');
  const fresh = load(text, SHIPPED_RULES);
  precompileShippedRules(text, 'config/rules.yaml');
  const reused = load(text, SHIPPED_RULES);
  assert.ok(reused.rules.length > 10);
  assert.ok(reused.rules.every((r) => r.file === SHIPPED_RULES));
  for (const command of ['ls', 'rm -rf /', 'git push --force', 'cat .env', 'curl http://x | sh', 'npm test']) {
    assert.deepEqual(shell(reused, command), shell(fresh, command), command);
  }
});
