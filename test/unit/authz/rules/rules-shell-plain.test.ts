import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { argvText, hasWhitespace, parsePlain } from '../../../../src/authz/rules/shell-plain';
import { applyPolicy } from '../../../../src/authz/policy';
import { rulesFrom, shell, shippedRules, WORKSPACE } from '../../../helpers/rules';
import { createAuthorizer } from '../../../../src/authz/authorizer';
import type { Agent } from '../../../../src/collective/participant';

const argvs = (line: string): string[][] | string => {
  const parsed = parsePlain(line);
  return parsed.plain ? parsed.commands.map((c) => [...c.argv]) : `not plain: ${parsed.why}`;
};

test('plain words: quotes and escapes are removed, lists and pipelines split', () => {
  assert.deepEqual(argvs('git status'), [['git', 'status']]);
  assert.deepEqual(argvs(`'git' "status" a\\ b "x y"'z'`), [['git', 'status', 'a b', 'x yz']]);
  assert.deepEqual(argvs('ls -la && pwd; echo a | wc -l\ntrue || true'), [['ls', '-la'], ['pwd'], ['echo', 'a'], ['wc', '-l'], ['true'], ['true']]);
  assert.deepEqual(argvs('git commit -m "line1\nline2"'), [['git', 'commit', '-m', 'line1\nline2']]);
  assert.deepEqual(argvs('echo "a\\"b\\\\c\\$d\\`e\\x"'), [['echo', 'a"b\\c$d`e\\x']]);
  assert.deepEqual(argvs('git log HEAD~1..main ^x a=b -- src/a.ts'), [['git', 'log', 'HEAD~1..main', '^x', 'a=b', '--', 'src/a.ts']]);
  assert.deepEqual(argvs('find . -exec ls {} ;'), [['find', '.', '-exec', 'ls', '{}']]); // bash reads `;` as a separator too
  assert.deepEqual(argvs('cmd 2>&1 >/dev/null </dev/null &>/dev/null 2>/dev/null >&-'), [['cmd']]);
  assert.deepEqual(argvs('ls *.ts src/?'), [['ls', '*.ts', 'src/?']]);
  const parsed = parsePlain('ls *.ts x');
  assert.ok(parsed.plain && parsed.commands[0]!.patterns.includes(1) && !parsed.commands[0]!.patterns.includes(2));
  // Indices into argv, redirections not counted.
  const redirected = parsePlain('ls 2>/dev/null x >/dev/null *.ts');
  assert.ok(redirected.plain);
  assert.deepEqual([redirected.commands[0]!.argv, redirected.commands[0]!.patterns], [['ls', 'x', '*.ts'], [2]]);
  assert.deepEqual(argvs('echo héllo→'), [['echo', 'héllo→']]);
});

test('plain words: anything else is not plain, and the reason names the part', () => {
  const table: [string, RegExp][] = [
    ['echo ${x:-<(touch PWNED)}', /^parameter expansion "\$\{x:-<\(touch PWNED\)\}"/],
    ['echo $HOME', /^parameter expansion "\$HOME"/],
    ['echo "$HOME"', /parameter expansion "\$HOME" inside double quotes/],
    ['echo $(date)', /^command substitution "\$\(date\)"/],
    ['echo `date`', /^command substitution/],
    ['echo "`date`"', /^command substitution/],
    ['cat <(ls)', /^process substitution/],
    ['echo >(ls)', /^process substitution/],
    ['echo $((1+2))', /^arithmetic expansion/],
    ['echo $[1+2]', /^arithmetic expansion/],
    ["echo $'\\x41'", /^ANSI-C quoting/],
    ['echo $"x"', /^locale quoting/],
    ['cat ~/.ssh/id_rsa', /^tilde expansion/],
    ['echo a=~', /^tilde expansion/],
    ['echo a:~root', /^tilde expansion/],
    // bash removes a line continuation before it reads a word: `a=\<newline>~` is `a=~`.
    ['cat x=\\\n~/secret', /^tilde expansion/],
    ['cat x=a:\\\n~/secret', /^tilde expansion/],
    ['a\\\n=1 cat README.md', /^a variable assignment/],
    ['echo {a,b}', /^a group or brace expansion/],
    ['{ ls; }', /^a group or brace expansion/],
    ['(ls)', /^a subshell/],
    ['f() { ls; }', /^a subshell or function definition/],
    ['ls # x', /^a comment/],
    ['ls > out', /^a redirection to or from a file ">/],
    ['ls >>x', /^a redirection to or from a file/],
    ['ls 2>/dev/nul', /^a redirection to or from a file/],
    ['ls >/dev/null*', /^a redirection to or from a file/],
    ['ls >&out', /^a redirection to or from a file/],
    ['cat <x', /^a redirection to or from a file/],
    ['cat <<EOF\nx\nEOF', /^a here-document/],
    ['cat <<<x', /^a here-document/],
    ['ls &', /^a background command/],
    ['ls & pwd', /^a background command/],
    ['ls |& cat', /^the pipe "\|&"/],
    ['X=1 ls', /^a variable assignment "X=1"/],
    ['X+=1 ls', /^a variable assignment/],
    ['if true; then ls; fi', /^the shell keyword "if"/],
    ['! ls', /^a "!"/],
    ['time ls', /^the shell keyword "time"/],
    ['/bin/l? x', /^a file-name pattern in the command name/],
    ['[ -f x ]', /^a file-name pattern in the command name/],
    ['ls;; pwd', /case syntax/],
    ['ls &&', /nothing after the operator/],
    ['&& ls', /an empty command/],
    ['ls | | wc', /an empty command/],
    ["echo 'unclosed", /^an unclosed quote/],
    ['echo "unclosed', /^an unclosed quote/],
    ['echo \\', /backslash at the end/],
    ['echo a\rb', /the character "\\r"/],
    ['echo !x', /^a "!"/],
  ];
  for (const [line, why] of table) {
    const parsed = parsePlain(line);
    assert.equal(parsed.plain, false, line);
    if (!parsed.plain) assert.match(parsed.why, why, line);
  }
  const at = parsePlain('git status ${x:-<(touch P)}');
  assert.ok(!at.plain && at.at === 11);
});

test('argvText: words joined by single spaces; a word with whitespace (or empty) is quoted, so one word never reads as two', () => {
  assert.equal(argvText(['git', 'status', '-s']), 'git status -s');
  assert.equal(argvText(['git', 'status --short', '']), `git 'status --short' ''`);
  assert.equal(argvText(['echo', "it's here"]), `echo 'it'\\''s here'`);
});

// The battery of issue #28: an allow rule for the command never allows a hidden substitution.
const USER_RULES = rulesFrom(
  'version: 1\nrules:\n' +
    '  - { id: echo-any, decision: allow, tool: shell, match: { command: "echo *" } }\n' +
    '  - { id: git-status, decision: allow, tool: shell, match: { command: "git status*" } }\n' +
    '  - { id: npm-test, decision: allow, tool: shell, match: { command: { words: [npm, test] } } }\n',
);

test('the battery: expansions hiding process substitution are never allowed by an allow rule', () => {
  const battery = [
    'echo ${x:-<(touch PWNED)}',
    'echo ${x:->(touch PWNED)}',
    'echo ${x-<(touch PWNED)}',
    'echo ${x:=<(touch PWNED)}',
    'echo ${x:+<(touch PWNED)}',
    'echo ${x#<(touch PWNED)}',
    'echo ${x/a/<(touch PWNED)}',
    'echo ${x:-${y:-<(touch PWNED)}}',
    'echo "${x:-<(touch PWNED)}"',
    'echo ${x:-"<(touch PWNED)"}',
    "echo ${x:-'<(touch PWNED)'}",
    'git status ${x:-<(touch PWNED)}',
    'git status ${x:->(touch PWNED)}',
    'npm test ${x:-<(touch PWNED)}',
    'echo $x',
    'echo ~root',
  ];
  for (const command of battery) {
    const outcome = shell(USER_RULES, command);
    assert.notEqual(outcome.decision, 'allow', command);
    assert.match(outcome.reason, /^not plain words: |^cannot check this shell command safely/, command);
    // Even where a policy or the default would allow it, a person decides.
    assert.equal(applyPolicy(outcome, { level: 'auto', glob: 'shell' }, 'ask').decision, 'ask', command);
    assert.equal(applyPolicy(outcome, null, 'allow').decision, 'ask', command);
    assert.equal(shell(shippedRules(), command).decision === 'allow', false, command);
  }
  // …while the plain forms stay allowed.
  assert.equal(shell(USER_RULES, 'echo "<(touch PWNED)"').decision, 'allow');
  assert.equal(shell(USER_RULES, 'git status --short').decision, 'allow');
  assert.equal(shell(USER_RULES, 'npm test -- --grep x').decision, 'allow');
  assert.equal(shell(USER_RULES, 'npm testx').decision, null);
  assert.equal(shell(USER_RULES, 'npm "test" && echo done').decision, 'allow');
});

test('the battery: shipped deny rules hold for dangerous shapes written through expansions', () => {
  const denied: [string, string][] = [
    ['echo ${x-<(rm -rf /)}', 'no-rm-root'],
    ['echo ${x:-<(rm -rf /)}', 'no-rm-root'],
    ['echo "${x:->(rm -rf /)}"', 'no-rm-root'],
    ['rm -rf ${x:-/}', 'no-rm-root'],
    ['rm -rf ${x-/}', 'no-rm-root'],
    ['rm -rf "${x:-/}"', 'no-rm-root'],
    ['rm -rf ${x:=/}', 'no-rm-root'],
    ['rm -rf ${x:-${y:-/}}', 'no-rm-root'],
    ['rm -rf ~root', 'no-rm-root'],
    ['rm -rf ~', 'no-rm-root'],
    ['find / -delete', 'no-find-delete-root'],
    ['find ${x:-/} -name x -delete', 'no-find-delete-root'],
    ['find ~ -exec rm {} +', 'no-find-delete-root'],
    ['kill -9 -1', 'no-kill-all'],
    ['kill -KILL -1', 'no-kill-all'],
    ['kill -s KILL -1', 'no-kill-all'],
    ['kill -- -1', 'no-kill-all'],
    ['sudo kill -9 ${x:--1}', 'no-kill-all'],
    ['systemctl poweroff', 'no-power-off'],
    ['systemctl reboot --force', 'no-power-off'],
    ['sudo systemctl isolate rescue.target', 'no-power-off'],
    ['cat .legion/web-token', 'shell-names-legion-state'],
    ['cat ./.legion/audit.jsonl', 'shell-names-legion-state'],
    ['ls .legion', 'shell-names-legion-state'],
    ['cat "$PWD/.LEGION/web-token"', 'shell-names-legion-state'],
  ];
  for (const [command, ruleId] of denied) {
    const outcome = shell(shippedRules(), command);
    assert.equal(outcome.decision, 'deny', `${command}: ${outcome.reason}`);
    assert.equal(outcome.ruleId, ruleId, command);
  }
  for (const command of ['kill -1 1234', 'kill 1234', 'find . -delete', 'rm -rf build', 'systemctl status', 'cat legion.txt', 'ls .legionrc', 'echo a.legion']) {
    assert.notEqual(shell(shippedRules(), command).decision, 'deny', command);
  }
});

test('a { words } pattern matches exact leading words of the argv; deny and ask rules may use it too', () => {
  const rules = rulesFrom(
    'version: 1\nrules:\n' +
      '  - { id: push-asks, decision: ask, tool: shell, match: { command: { words: [git, push] } } }\n' +
      '  - { id: git, decision: allow, tool: shell, match: { command: { words: [git] } } }\n',
  );
  assert.equal(shell(rules, 'git log').decision, 'allow');
  assert.equal(shell(rules, 'git push origin').decision, 'ask');
  assert.equal(shell(rules, 'sudo git push').decision, 'ask'); // asks see through wrappers
  assert.equal(shell(rules, 'gitx log').decision, null);
});

test('through the authorizer: an agent trusted with shell (policy auto) still asks for a line that is not plain, and the queue says why', () => {
  const agent: Agent = {
    id: 'ops', kind: 'agent', name: 'ops', description: '', status: 'active', systemPrompt: 'x', provider: 'default', model: 'default',
    tools: ['shell'], toolAuthorizations: { shell: 'auto' }, approvalAuthority: [],
  };
  const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), workspaceRoot: WORKSPACE, getParticipant: () => agent, realPath: () => null });
  const decide = (command: string) => authorize({ toolName: 'shell', input: { command }, participantId: 'ops', sessionId: 's', chain: ['user', 'ops'] });
  assert.equal(decide('npm install').decision, 'allow'); // plain: the policy decides
  const verdict = decide('npm install ${x:-<(touch PWNED)}');
  assert.equal(verdict.decision, 'ask');
  assert.match(verdict.reason, /not plain words: parameter expansion "\$\{x:-<\(touch PWNED\)\}" at character 13; no rule can allow it/);
  // With the shipped fallback (no policy), the queue's reason names the part too.
  const user = createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), workspaceRoot: WORKSPACE, getParticipant: () => ({ id: 'user', kind: 'user', name: 'You', description: '', status: 'active', approvalAuthority: '*' }), realPath: () => null });
  const asked = user({ toolName: 'shell', input: { command: 'echo $HOME' }, participantId: 'user', sessionId: 's', chain: ['user'] });
  assert.equal(asked.decision, 'ask');
  assert.equal(asked.ruleId, 'shell-ask');
  assert.match(asked.reason, /you decide \(not plain words: parameter expansion "\$HOME" at character 6/);
});

test('a script given to sh -c, eval or trap that the splitter cannot split makes the line ask, even under an allow for the wrapper', () => {
  const rules = rulesFrom('version: 1\nrules:\n  - { id: trap, decision: allow, tool: shell, match: { command: "trap *" } }\n  - { id: eval, decision: allow, tool: shell, match: { command: { words: [eval] } } }\n');
  for (const command of [`trap 'echo \${v:=<(git status)}' EXIT`, `trap '{rm,-rf,x}' EXIT`, `eval 'echo $(( 1 + 2 ))'`, `eval "sh -c 'eval \\"sh -c \\\\\\"eval x\\\\\\"\\"'"`]) {
    const outcome = shell(rules, command);
    assert.equal(outcome.decision, 'ask', `${command}: ${outcome.reason}`);
    assert.match(outcome.reason, /cannot check this shell command safely \((the script|scripts nested deeper)/, command);
  }
  assert.equal(shell(rules, `trap 'echo done' EXIT`).decision, 'allow');
});

test('hasWhitespace is /\\s/ for every character (alone and inside a word), without its regex for ASCII', () => {
  for (let c = 0; c <= 0xffff; c++) {
    const ch = String.fromCharCode(c);
    assert.equal(hasWhitespace(ch), /\s/.test(ch), `U+${c.toString(16)}`);
    assert.equal(hasWhitespace(`a${ch}b`), /\s/.test(ch), `a U+${c.toString(16)} b`);
  }
  assert.equal(hasWhitespace(''), false);
  assert.equal(hasWhitespace('caf\u00e9\u00a0x'), true);
});
