import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadRuleFiles, defaultRuleFiles } from '../../../../src/authz/rules/load';
import { editDistance, suggest } from '../../../../src/authz/rules/did-you-mean';
import { literalPrefix } from '../../../../src/authz/rules/compile';
import { loadError, rulesFrom, decide, SHIPPED_RULES } from '../../../helpers/rules';
import { withTempDir } from '../../../helpers/tmp';
import { TRUSTED, type WorkspaceTrust } from '../../../../src/storage/workspace-trust';

const UNTRUSTED: WorkspaceTrust = { trusted: false, reason: 'no-marker', detail: 'test' };

const head = 'version: 1\nrules:\n';

// Each bad file and the exact one-line error it must produce (`file:line: rule <id>: …`).
const BAD_FILES: readonly [name: string, text: string, error: string][] = [
  ['yaml syntax', `${head}  - id: a\n    decision: allow\n   tool: [shell\n`, 'rules.yaml:5: YAML syntax:'],
  ['unknown decision', `${head}  - id: maybe-rule\n    decision: maybe\n    tool: shell\n`, 'rules.yaml:4: rule maybe-rule: unknown decision "maybe" (allow, ask or deny)'],
  ['decision typo', `${head}  - id: r1\n    decision: alow\n    tool: shell\n`, 'rules.yaml:4: rule r1: unknown decision "alow" (allow, ask or deny) (did you mean "allow"?)'],
  ['bad regex', `${head}  - id: git\n    decision: allow\n    tool: shell\n    match:\n      command: { regex: "git (status" }\n`, 'rules.yaml:7: rule git: bad regex in match.command: Invalid regular expression: /^(?:git (status)$/: Unterminated group'],
  ['unknown rule field', `${head}  - id: r2\n    decision: deny\n    tool: shell\n    reasn: no\n`, 'rules.yaml:6: rule r2: unknown field "reasn" (did you mean "reason"?)'],
  ['unknown field far from any', `${head}  - id: r3\n    decision: deny\n    tool: shell\n    colour: red\n`, 'rules.yaml:6: rule r3: unknown field "colour"'],
  ['tools instead of tool', `${head}  - id: r4\n    decision: deny\n    tools: shell\n`, 'rules.yaml:5: rule r4: unknown field "tools" (did you mean "tool"?)'],
  ['participant typo', `${head}  - id: r5\n    decision: deny\n    tool: shell\n    partcipants: ["*"]\n`, 'rules.yaml:6: rule r5: unknown field "partcipants" (did you mean "participants"?)'],
  ['missing id', `${head}  - decision: deny\n    tool: shell\n`, 'rules.yaml:3: rule #1: missing "id"'],
  ['missing tool', `${head}  - id: r6\n    decision: deny\n`, 'rules.yaml:3: rule r6: missing "tool"'],
  ['missing decision', `${head}  - id: r7\n    tool: shell\n`, 'rules.yaml:3: rule r7: missing "decision"'],
  ['unknown tool', `${head}  - id: r8\n    decision: allow\n    tool: file_raed\n`, 'rules.yaml:5: rule r8: unknown tool "file_raed" (did you mean "file_read"?)'],
  ['look-alike tool in a rule', `${head}  - id: r9\n    decision: deny\n    tool: "file_reаd|shell"\n`, 'rules.yaml:5: rule r9: unknown tool "file_reаd" (did you mean "file_read"?)'],
  ['unknown match field', `${head}  - id: r10\n    decision: allow\n    tool: shell\n    match: { comand: "ls" }\n`, 'rules.yaml:6: rule r10: unknown field "comand" in match (did you mean "command"?): shell has command, timeoutMs'],
  ['match field of a tool without input', `${head}  - id: r11\n    decision: allow\n    tool: list_tools\n    match: { path: x }\n`, 'rules.yaml:6: rule r11: unknown field "path" in match: list_tools takes no input'],
  ['bad match value', `${head}  - id: r12\n    decision: allow\n    tool: shell\n    match: { command: 3 }\n`, 'rules.yaml:6: rule r12: match.command: expected a glob string, a list of globs, { regex: "…" }, { words: [...] } or { readOnly: [...] }'],
  ['unknown key in regex', `${head}  - id: r13\n    decision: allow\n    tool: shell\n    match: { command: { regexp: "x" } }\n`, 'rules.yaml:6: rule r13: match.command: expected a glob string, a list of globs, { regex: "…" }, { words: [...] } or { readOnly: [...] }'],
  ['duplicate id', `${head}  - id: same\n    decision: allow\n    tool: shell\n  - id: same\n    decision: deny\n    tool: shell\n`, 'rules.yaml:6: rule same: duplicate id (also at line 3)'],
  ['empty tool alternative', `${head}  - id: r14\n    decision: deny\n    tool: "shell||grep"\n`, 'rules.yaml:5: rule r14: empty alternative in tool "shell||grep"'],
  ['bad glob', `${head}  - id: r15\n    decision: deny\n    tool: file_read\n    match: { path: "**/*.{pem" }\n`, 'rules.yaml:6: rule r15: match.path: bad glob "**/*.{pem" (unbalanced brackets or braces?)'],
  ['approver not an id', `${head}  - id: r16\n    decision: ask\n    tool: shell\n    approver: "Not An Id"\n`, 'rules.yaml:6: rule r16: approver "Not An Id" is not a participant id'],
  ['approver on allow', `${head}  - id: r17\n    decision: allow\n    tool: shell\n    approver: user\n`, 'rules.yaml:6: rule r17: approver only applies to decision: ask (this rule says allow)'],
  ['id with spaces', `${head}  - id: "two words"\n    decision: deny\n    tool: shell\n`, 'rules.yaml:3: rule two words: a rule id is 1–100 characters without spaces'],
  ['rule not a mapping', `${head}  - just a string\n`, 'rules.yaml:3: rule #1: expected a mapping with id, decision and tool'],
  ['wrong version', 'version: 2\nrules: []\n', 'rules.yaml:1: unsupported version 2 (this Legion reads version: 1)'],
  ['missing version', 'rules: []\n', 'rules.yaml:1: missing "version"'],
  ['unknown top-level field', 'version: 1\nrule: []\n', 'rules.yaml:2: unknown field "rule" (did you mean "rules"?)'],
  ['bad default', 'version: 1\ndefaults: { unmatched: allwo }\n', 'rules.yaml:2: unknown decision "allwo" (allow, ask or deny) (did you mean "allow"?)'],
  ['unknown defaults field', 'version: 1\ndefaults: { unmatch: ask }\n', 'rules.yaml:2: unknown field "unmatch" (did you mean "unmatched"?)'],
  ['top level list', '- id: x\n', 'rules.yaml:1: a rules file is a mapping with version: 1, defaults and rules'],
  ['second rule is bad, first fine', `${head}  - id: ok\n    decision: allow\n    tool: shell\n  - id: bad\n    decision: deny\n    tool: shel\n`, 'rules.yaml:8: rule bad: unknown tool "shel" (did you mean "shell"?)'],
];

for (const [name, text, error] of BAD_FILES) {
  test(`bad rules file: ${name}`, () => {
    const actual = loadError(text);
    if (error.endsWith(':')) assert.ok(actual.startsWith(error), actual);
    else assert.equal(actual, error);
  });
}

test('globs and mcp__ names are not checked against the known tools', () => {
  assert.equal(loadError(`${head}  - id: a\n    decision: ask\n    tool: "mcp__*|list_*|mcp__github__create_issue"\n    match: { anything: x }\n`), 'ok');
});

test('an empty file is an empty layer; rules: null is no rules', () => {
  assert.equal(loadError(''), 'ok');
  assert.equal(loadError('version: 1\nrules:\n'), 'ok');
  assert.equal(rulesFrom('').rules.length, 0);
  assert.equal(rulesFrom('').unmatched, 'ask');
});

test('layers concatenate in order and a later defaults wins', () => {
  const ruleSet = rulesFrom(
    'version: 1\ndefaults: { unmatched: deny }\nrules:\n  - { id: a, decision: allow, tool: file_read }\n',
    'version: 1\ndefaults: { unmatched: allow }\nrules:\n  - { id: a, decision: deny, tool: file_read, match: { path: "secret/**" } }\n',
  );
  assert.deepEqual(ruleSet.rules.map((r) => `${r.file}:${r.line}:${r.id}`), ['layer1.yaml:4:a', 'layer2.yaml:4:a']);
  assert.equal(ruleSet.unmatched, 'allow');
  assert.equal(decide(ruleSet, 'file_read', { path: 'secret/x' }).decision, 'deny');
  assert.equal(decide(ruleSet, 'file_read', { path: 'open/x' }).decision, 'allow');
  // a layer without defaults keeps the earlier one
  assert.equal(rulesFrom('version: 1\ndefaults: { unmatched: deny }\n', 'version: 1\n').unmatched, 'deny');
});

test('loadRuleFiles: missing files are skipped, present ones counted, the error names the real file', async () => {
  await withTempDir(async (dir) => {
    const user = join(dir, 'user.yaml');
    const project = join(dir, 'project.yaml');
    await writeFile(project, `${head}  - { id: p, decision: deny, tool: shell }\n`);
    const loaded = await loadRuleFiles([SHIPPED_RULES, user, project]);
    assert.ok(loaded.ok);
    assert.deepEqual(loaded.ruleSet.files.map((f) => f.file), [SHIPPED_RULES, project]);
    assert.equal(loaded.ruleSet.files[1]!.rules, 1);

    await writeFile(user, `${head}  - { id: u, decision: ask, tool: shell, match: { command: { regex: "(" } } }\n`);
    const bad = await loadRuleFiles([SHIPPED_RULES, user, project]);
    assert.ok(!bad.ok);
    assert.match(bad.error, new RegExp(`^${user.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:3: rule u: bad regex in match.command: `));
  });
});

test('loadRuleFiles: an unreadable file is an error, not a skipped layer', async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, 'rules.yaml');
    await mkdir(file); // a directory where the file should be: EISDIR, even for root
    const loaded = await loadRuleFiles([file]);
    assert.ok(!loaded.ok);
    assert.match(loaded.error, /rules\.yaml: cannot read: /);
  });
});

test('defaultRuleFiles: shipped, XDG or ~/.config, project (a tightening-only layer when untrusted)', async () => {
  assert.deepEqual(defaultRuleFiles('/app', '/ws', { HOME: '/home/u' }, TRUSTED), ['/app/config/rules.yaml', '/home/u/.config/legion/rules.yaml', { file: '/ws/.legion/rules.yaml', tightenOnly: false }]);
  assert.deepEqual(defaultRuleFiles('/app', '/ws', { HOME: '/home/u' }, UNTRUSTED)[2], { file: '/ws/.legion/rules.yaml', tightenOnly: true });
  assert.deepEqual(defaultRuleFiles('/app', '/ws', { HOME: '/home/u', XDG_CONFIG_HOME: '/xdg' }, TRUSTED)[1], '/xdg/legion/rules.yaml');
  await withTempDir(async (dir) => {
    await mkdir(join(dir, '.legion'));
    await writeFile(join(dir, '.legion', 'rules.yaml'), 'version: 1\nrules:\n  - { id: mine, decision: deny, tool: grep }\n');
    const loaded = await loadRuleFiles(defaultRuleFiles(join(SHIPPED_RULES, '..', '..'), dir, { HOME: dir }, TRUSTED));
    assert.ok(loaded.ok);
    assert.equal(loaded.ruleSet.rules.at(-1)!.id, 'mine');
  });
});

test('did-you-mean: transpositions count once, far words get no suggestion', () => {
  assert.equal(editDistance('raed', 'read'), 1);
  assert.equal(editDistance('', 'abc'), 3);
  assert.equal(suggest('decison', ['decision', 'reason']), 'decision');
  assert.equal(suggest('xyz', ['decision', 'reason']), null);
  assert.equal(suggest('Tool', ['tool']), 'tool');
});

test('literal prefixes used as a pre-check are never longer than what every match starts with', () => {
  const cases: [Parameters<typeof literalPrefix>[0], string][] = [
    ['git status', 'git status'], ['git status*', 'git status'], ['npm [a-z]*', 'npm '], [['npm test', 'npm run *'], 'npm '], [['a', 'b'], ''],
    [{ regex: 'git status' }, 'git status'], [{ regex: 'git (status|diff)' }, 'git '], [{ regex: 'gits?' }, 'git'], [{ regex: 'a|b' }, ''],
    [{ regex: 'rm(?=.*x)\\s.*' }, 'rm'], [{ regex: 'x{2}' }, ''], [{ regex: 'ab{2}' }, 'a'], [{ regex: '[a]b' }, ''], [{ regex: '(a|b)c|d' }, ''],
    [{ regex: 'a\\|b' }, 'a'], [{ regex: 'a[|]b' }, 'a'], [{ regex: 'git\\s' }, 'git'], [{ regex: '.*x' }, ''], [{ regex: 'ab*' }, 'a'], [{ regex: 'ab+' }, 'ab'],
  ];
  for (const [pattern, expected] of cases) assert.equal(literalPrefix(pattern), expected, JSON.stringify(pattern));
  // Strict rules compare case-insensitively: the pre-check must not hide a match.
  const ruleSet = rulesFrom('version: 1\nrules:\n  - { id: d, decision: deny, tool: shell, match: { command: { regex: "Git Push.*" } } }\n');
  assert.equal(decide(ruleSet, 'shell', { command: 'gIT pUSH -f' }).decision, 'deny');
});
