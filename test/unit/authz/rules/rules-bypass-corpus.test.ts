import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SHELL_BYPASS_CORPUS } from '../shell-bypass-corpus';
import { rulesFrom, shell, shippedRules } from '../../../helpers/rules';
import { parsePlain } from '../../../../src/authz/rules/shell-plain';

/**
 * What bash runs for an allowed line, as argv lists (only plain lines can be allowed). An
 * attempt that only re-quotes `git status` (`'git' "status"`, `\\git status`) runs exactly
 * `git status`: allowing it is right. A bypass is an allowed line that runs anything else.
 */
const runsOtherThanGitStatus = (command: string, argsOnly: boolean): boolean => {
  const plain = parsePlain(command);
  if (!plain.plain) return true;
  return plain.commands.some((c) => c.argv[0] !== 'git' || c.argv[1] !== 'status' || (!argsOnly && c.argv.length > 2) || c.redirects.length > 0);
};

const allowOnly = (match: string) => rulesFrom(`version: 1\nrules:\n  - { id: git-status, decision: allow, tool: shell, match: { command: ${match} } }\n`);

const EXACT = {
  'regex "git status"': allowOnly('{ regex: "git status" }'),
  'glob "git status"': allowOnly('"git status"'),
  'shipped rules': shippedRules(),
};
// Rules that deliberately allow any arguments: only `argsOnly` attempts may pass them.
const ANY_ARGS = {
  'regex "git status( .*)?"': allowOnly('{ regex: "git status( .*)?" }'),
  'glob "git status*"': allowOnly('"git status*"'),
};

test('the corpus holds at least 100 distinct attempts', () => {
  assert.ok(SHELL_BYPASS_CORPUS.length >= 100, `${SHELL_BYPASS_CORPUS.length}`);
  assert.equal(new Set(SHELL_BYPASS_CORPUS.map((a) => a.command)).size, SHELL_BYPASS_CORPUS.length);
});

test('the allow-lists do allow plain git status (so the corpus test can fail)', () => {
  for (const ruleSet of [...Object.values(EXACT), ...Object.values(ANY_ARGS)]) {
    assert.equal(shell(ruleSet, 'git status').decision, 'allow');
    assert.equal(shell(ruleSet, 'git status; git status').decision, 'allow');
  }
});

for (const [name, ruleSet] of Object.entries(EXACT)) {
  test(`bypass corpus: nothing is allowed by ${name}`, () => {
    const allowed = SHELL_BYPASS_CORPUS.filter((a) => shell(ruleSet, a.command).decision === 'allow' && runsOtherThanGitStatus(a.command, name === 'shipped rules'));
    assert.deepEqual(allowed.map((a) => `${a.why}: ${JSON.stringify(a.command.slice(0, 120))}`), []);
  });
}

for (const [name, ruleSet] of Object.entries(ANY_ARGS)) {
  test(`bypass corpus: ${name} allows only extra arguments to git status itself`, () => {
    const allowed = SHELL_BYPASS_CORPUS.filter((a) => !a.argsOnly && shell(ruleSet, a.command).decision === 'allow' && runsOtherThanGitStatus(a.command, true));
    assert.deepEqual(allowed.map((a) => `${a.why}: ${JSON.stringify(a.command.slice(0, 120))}`), []);
  });
}

// Where a deny for the payload cannot see it, and why (all of these still ask, never allow):
const OPAQUE_TO_AN_ANCHORED_DENY = new Set([
  'deep nesting', // the payload is only echoed, never run
  'heredoc', // heredocs are not parsed: the command asks
  'indented heredoc',
  'pager assignment', // inside an assignment value / git config: text rules cannot know it runs
  'config override running a pager',
  'alias override',
  'ANSI-C newline inside a word (one git argument)',
  'echo into sh', // data piped into a shell
  'here-string into sh',
  'python', // interpreters with inline programs
  'perl',
  'node',
  'awk system()',
  'comment hiding a separator', // comments are not parsed: the command asks
  'comment with substitution',
  'payload with a comment',
  'comment then newline',
  'function shadowing git', // function definitions are not parsed
  'nesting deeper than the limit', // not parsed past 32 levels: the command asks
]);

test('bypass corpus: a deny for the payload denies it in parts, substitutions, groups and wrappers', () => {
  const anchored = rulesFrom(`version: 1
rules:
  - { id: git-status, decision: allow, tool: shell, match: { command: { regex: "git status( .*)?" } } }
  - { id: no-rm, decision: deny, tool: shell, match: { command: { regex: 'rm\\s+-rf\\s+x' } } }
`);
  const hidden = SHELL_BYPASS_CORPUS.filter((a) => a.command.includes('rm -rf x') && a.command.length < 1000);
  assert.ok(hidden.length > 60, `${hidden.length}`);
  const escaped = hidden.filter((a) => shell(anchored, a.command).decision !== 'deny').map((a) => a.why);
  assert.deepEqual(escaped.filter((why) => !OPAQUE_TO_AN_ANCHORED_DENY.has(why)), []);
  for (const a of hidden) assert.notEqual(shell(anchored, a.command).decision, 'allow', a.why);
  // A deny written against the whole line sees everything, even what cannot be parsed.
  const unanchored = rulesFrom(`version: 1
rules:
  - { id: no-rm, decision: deny, tool: shell, match: { command: { regex: '.*rm\\s+-rf\\s+x.*' } } }
`);
  assert.deepEqual(hidden.filter((a) => shell(unanchored, a.command).decision !== 'deny').map((a) => a.why), []);
});
