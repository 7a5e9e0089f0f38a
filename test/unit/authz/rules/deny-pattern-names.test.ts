import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { rulesFrom, shell, SHIPPED_RULES } from '../../../helpers/rules';

/**
 * A file-name pattern is plain words, so a user's `allow "cat *"` allows `cat .le*\/web-token`,
 * and bash expands it to `.legion/web-token`: the shipped deny of Legion's state as a shell
 * argument (shell-names-legion-state) and the ask for secret files (shell-mentions-secrets) read
 * the text and never saw `.legion` nor `.env`. Unsandboxed (sandbox off, macOS) the web token,
 * which answers the approvals, was printed to the agent. Deny and ask rules now also see each
 * path component that begins with a literal `.` and holds a pattern as the dot-name it matches.
 */
const rules = rulesFrom(
  readFileSync(SHIPPED_RULES, 'utf8'),
  'version: 1\nrules:\n  - { id: user-cat, decision: allow, tool: shell, match: { command: "cat *" } }\n  - { id: user-ls, decision: allow, tool: shell, match: { command: "ls *" } }\n',
);
const outcome = (command: string): [string | null, string | null] => {
  const o = shell(rules, command);
  return [o.decision ?? o.fallback?.decision ?? null, o.ruleId ?? o.fallback?.ruleId ?? null];
};

test('a pattern bash expands to .legion is denied like .legion written out', () => {
  for (const command of ['cat .le*/web-token', 'cat .l?gion/web-token', 'cat .[l]egion/web-token', 'cat ./.legio[n]/web-token', 'cat .*/web-token', 'cat sub/.leg[!x]on/audit.jsonl', 'ls .lEg*', 'cat .legion*/web-token']) {
    assert.deepEqual(outcome(command), ['deny', 'shell-names-legion-state'], command);
  }
});

test('a pattern bash expands to a dot-named secret asks like the name written out', () => {
  for (const command of ['cat .en?', 'cat .npmr*', 'cat config/.e[n]v', 'cat .netr[c]', 'ls .ss?/']) {
    assert.deepEqual(outcome(command), ['ask', 'shell-mentions-secrets'], command);
  }
});

test('patterns that cannot name .legion or a dot-named secret keep their outcome', () => {
  // `*` and `?` match no leading dot in bash (dotglob off): only a literal leading `.` can.
  for (const command of ['cat *.ts', 'cat .eslintrc*', 'ls .github/*', 'cat *legion/x', 'cat ?legion/x', 'cat src/*.md', 'cat .vscode*/x', 'cat .[x]ignore', 'cat .[z-a]x']) {
    assert.deepEqual(outcome(command), ['allow', command.startsWith('ls') ? 'user-ls' : 'user-cat'], command);
  }
});
