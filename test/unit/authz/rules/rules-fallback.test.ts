import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { applyPolicy } from '../../../../src/authz/policy';
import { join } from 'node:path';
import { SHIPPED_RULES, decide, loadError, rulesFrom, shippedRules } from '../../../helpers/rules';
import { runCli } from '../../../helpers/cli';
import { withTempDir } from '../../../helpers/tmp';

/**
 * Fallback rules (config/rules.yaml's writes-ask, edits-ask, deletes-ask, shell-ask): they
 * decide only where no other rule of any layer matches and no policy speaks, so an approval
 * always says why in words a person understands, and a user's allow rule still lifts them.
 */
const verdict = (ruleSet: ReturnType<typeof rulesFrom>, tool: string, input: unknown) => applyPolicy(decide(ruleSet, tool, input), null, ruleSet.unmatched);

test('the shipped rules ask for writes, edits, deletes and shell with a reason a person understands', () => {
  const rules = shippedRules();
  const cases: [string, unknown, string, string][] = [
    ['file_write', { path: 'notes/a.md', content: 'x' }, 'writes-ask', 'Writing changes your files: you decide'],
    ['file_edit', { path: 'src/a.ts', oldString: 'a', newString: 'b' }, 'edits-ask', 'Editing changes your files: you decide'],
    ['file_delete', { path: 'old.txt' }, 'deletes-ask', 'Deleting removes a file for good: you decide'],
    ['shell', { command: 'npm test' }, 'shell-ask', 'A shell command can change anything the workspace holds: you decide (no rule allows `npm test`)'],
  ];
  for (const [tool, input, ruleId, reason] of cases) {
    assert.deepEqual(verdict(rules, tool, input), { decision: 'ask', ruleId, reason, source: 'rule', fallback: true }, tool);
  }
  // Ordinary rules still decide first: an allowed command is allowed, a secret is denied.
  assert.equal(verdict(rules, 'shell', { command: 'git status' }).decision, 'allow');
  assert.equal(verdict(rules, 'file_write', { path: '.env', content: 'x' }).ruleId, 'no-secrets');
});

test("a user's allow rule lifts a fallback ask; an ordinary ask would not be liftable", () => {
  const shipped = readFileSync(SHIPPED_RULES, 'utf8');
  const mine = 'version: 1\nrules:\n  - { id: docs-free, decision: allow, tool: file_write, match: { path: "docs/**" } }\n';
  const rules = rulesFrom(shipped, mine);
  assert.deepEqual(verdict(rules, 'file_write', { path: 'docs/a.md', content: 'x' }), { decision: 'allow', ruleId: 'docs-free', reason: 'allow by rule docs-free', source: 'rule' });
  assert.equal(verdict(rules, 'file_write', { path: 'src/a.ts', content: 'x' }).ruleId, 'writes-ask');
});

test('a policy speaks before a fallback (auto allows, requires_approval names the policy); a fallback never allows', () => {
  const rules = shippedRules();
  const outcome = decide(rules, 'file_write', { path: 'a.md', content: 'x' });
  assert.equal(applyPolicy(outcome, { level: 'auto', glob: 'file_*' }, 'ask').decision, 'allow');
  assert.equal(applyPolicy(outcome, { level: 'requires_approval', glob: 'file_*' }, 'ask').source, 'policy');
  assert.equal(
    loadError('version: 1\nrules:\n  - { id: loose, decision: allow, fallback: true, tool: shell }\n'),
    'rules.yaml:3: rule loose: a fallback rule must ask or deny (this rule says allow)',
  );
  assert.equal(loadError('version: 1\nrules:\n  - { id: x, decision: ask, fallbak: true, tool: shell }\n'), 'rules.yaml:3: rule x: unknown field "fallbak" (did you mean "fallback"?)');
  // Without a fallback rule, defaults.unmatched decides as before.
  const bare = rulesFrom('version: 1\n');
  assert.deepEqual(verdict(bare, 'file_write', { path: 'a.md', content: 'x' }), { decision: 'ask', ruleId: null, reason: 'no rule matches and no policy applies: defaults.unmatched is ask', source: 'default' });
});

test('legion rules list marks the fallback rules; legion rules explain gives their reason', async () => {
  await withTempDir(async (dir) => {
    const appDir = join(SHIPPED_RULES, '..', '..');
    const list = await runCli(['--cwd', dir, 'rules', 'list'], { cwd: dir, appDir, env: { HOME: dir } });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /writes-ask +ask +file_write {2}fallback: only where no other rule matches\n/);
    const explain = await runCli(['--cwd', dir, 'rules', 'explain', '--json', 'file_delete', '{"path":"a.txt"}'], { cwd: dir, appDir, env: { HOME: dir } });
    assert.deepEqual(JSON.parse(explain.stdout), { decision: 'ask', ruleId: 'deletes-ask', reason: 'Deleting removes a file for good: you decide' });
  });
});
