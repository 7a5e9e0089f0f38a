import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { splitShell } from '../../../../src/authz/rules/shell-split';
import { rulesFrom, shell } from '../../../helpers/rules';

const allowEcho = rulesFrom(`version: 1
rules:
  - { id: echo, decision: allow, tool: shell, match: { command: "echo *" } }
  - { id: sudo, decision: allow, tool: shell, match: { command: "sudo *" } }
  - { id: no-rm, decision: deny, tool: shell, match: { command: { regex: 'rm\\s+-rf.*' } } }
`);

const texts = (command: string): string[] | string => {
  const split = splitShell(command);
  return split.ok ? split.commands.map((c) => c.text) : `error: ${split.error}`;
};

test('a substitution inside single quotes inside a double-quoted ${…} is extracted (bash runs it)', () => {
  assert.deepEqual(texts(`echo "\${x:-'$(touch PWNED)'}"`), ['touch PWNED', `echo "\${x:-'$(touch PWNED)'}"`]);
  assert.notEqual(shell(allowEcho, `echo "\${x:-'$(touch PWNED)'}"`).decision, 'allow');
  assert.equal(shell(allowEcho, `echo "\${x:-'$(rm -rf ~)'}"`).decision, 'deny');
  // Single quotes still delimit: bash closes the ${ after '}'.
  assert.deepEqual(texts(`echo "\${x:-'}'$(b)}"`), ['b', `echo "\${x:-'}'$(b)}"`]);
  assert.deepEqual(texts('echo "${x:-\'`b`\'}"'), ['b', 'echo "${x:-\'`b`\'}"']);
  // Plain single quotes outside ${…} are still literal.
  assert.deepEqual(texts("echo '$(not run)'"), ["echo '$(not run)'"]);
  assert.equal(shell(allowEcho, "echo '$(not run)'").decision, 'allow');
});

test('brace expansion or a pattern in a command name asks', () => {
  for (const command of ['{rm,-rf,~}', '{rm,-rf,x}; echo', 'x=1 {rm,-rf,~}', 'sudo {rm,-rf,~}', 'then {a..b}', '/bin/r? -rf ~', '/usr/*/rm x', '[r]m -rf x']) {
    assert.match(texts(command) as string, /^error: (brace expansion|file-name pattern)/, command);
    assert.notEqual(shell(allowEcho, command).decision, 'allow', command);
  }
  // Arguments may still use them; quoted braces are not expansions.
  assert.deepEqual(texts('echo {a,b} *.ts'), ['echo {a,b} *.ts']);
  assert.deepEqual(texts('mkdir -p src/{a,b}'), ['mkdir -p src/{a,b}']);
  assert.deepEqual(texts("'{a,b}' x"), ["'{a,b}' x"]);
  assert.deepEqual(texts('[ -f x ]'), ['[ -f x ]']);
  // …but braces are not plain words, so no rule allows them (a person decides).
  assert.equal(shell(allowEcho, 'echo {a,b}').decision, null);
  assert.equal(shell(allowEcho, 'echo *.ts').decision, 'allow');
});

test('${…} forms that build code from data ask', () => {
  const table: [string, RegExp][] = [
    ['echo ${x@P}', /prompt expansion/],
    ['echo "${x@P}"', /prompt expansion/],
    ['echo ${!x}', /indirect expansion/],
    ['echo ${a[y]}', /array subscript/],
    ["echo ${a['$(b)']}", /array subscript/],
    ['echo ${x:=v}', /assignment/],
    ['echo ${x=v}', /assignment/],
    ['echo ${x:y}', /offset/],
    ['echo ${x:1:y}', /offset/],
    ['echo $[y]', /arithmetic/],
    ['echo "$[y]"', /arithmetic/],
    ['function f { a; }', /function definitions/],
  ];
  for (const [command, error] of table) {
    assert.match(texts(command) as string, error, command);
    assert.equal(shell(allowEcho, command).decision, 'ask', command);
  }
  // Harmless forms still split (for deny and ask rules), but no rule allows an expansion.
  for (const command of ['echo ${x:-d}', 'echo ${#x}', 'echo ${x:1:2}', 'echo ${x: -1}', 'echo ${a[0]} ${a[@]} ${!a[@]} ${!pre*}', 'echo ${x@Q}', 'echo ${x/a/b}']) {
    assert.ok(splitShell(command).ok, command);
    assert.equal(shell(allowEcho, command).decision, null, command);
    assert.match(shell(allowEcho, command).reason, /not plain words: parameter expansion/, command);
  }
  // A substitution in $[…] is still seen by deny rules.
  assert.equal(shell(allowEcho, 'echo $[1+$(rm -rf x)]').decision, 'deny');
});

test("a trap's action is a script deny rules look into", () => {
  assert.equal(shell(allowEcho, "trap 'rm -rf x' EXIT").decision, 'deny');
});
