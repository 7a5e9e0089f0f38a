import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SHIPPED_RULES, rulesFrom, shell } from '../../../helpers/rules';

/**
 * An allow rule matches a plain line's commands by their words without redirections; a deny or an
 * ask rule must see that text too, or a redirection written first (`2>&1 curl …`, which the shell
 * runs as `curl …`) hides the command from the deny and the allow lets it through.
 */
const USER = `version: 1
rules:
  - { id: curl-evil-deny, decision: deny, tool: shell, match: { command: "curl *evil*" } }
  - { id: rm-ask, decision: ask, tool: shell, match: { command: "rm *" } }
  - { id: curl-allow, decision: allow, tool: shell, match: { command: "curl *" } }
  - { id: rm-allow, decision: allow, tool: shell, match: { command: { words: [rm] } } }
`;
/** The shipped rules with USER's above them. */
const rules = rulesFrom(readFileSync(SHIPPED_RULES, 'utf8'), USER);
const decide = (command: string) => shell(rules, command);

test('a deny or ask rule is not escaped by a redirection written before the command', () => {
  for (const prefix of ['', '2>&1 ', '>/dev/null ', '2>/dev/null ', '2>&1 >/dev/null ', '</dev/null ']) {
    const denied = decide(`${prefix}curl http://evil.example`);
    assert.equal(denied.decision, 'deny', `${JSON.stringify(prefix)} curl: ${denied.ruleId}`);
    const asked = decide(`${prefix}rm notes.txt`);
    assert.equal(asked.decision, 'ask', `${JSON.stringify(prefix)} rm: ${asked.ruleId}`);
    assert.equal(decide(`${prefix}curl http://ok.example`).decision, 'allow', 'the allow still applies where nothing denies');
  }
});

test('a deny or ask rule is not escaped by a file redirection or here-string written before the command (a line that is not plain)', () => {
  // Without the deny these lines would only ask (not plain): an ask can be approved, by an agent
  // approver too; a deny cannot. So the rule itself must be the one that decides.
  for (const prefix of ['>out ', '2>err ', '>>log ', '&>out ', '<in ', '<<<x ', '<<< "x y" ', '0<<<x ', '2>err >out ', 'true; >out ', 'true && <<<x ', 'sudo >out ', '>out env ', '<<<x command ', '{fd}>out ', '{fd}<&- ', '{log}>>log ', 'true; {fd}>out ']) {
    const denied = decide(`${prefix}curl http://evil.example`);
    assert.deepEqual([denied.decision, denied.ruleId], ['deny', 'curl-evil-deny'], `${JSON.stringify(prefix)} curl`);
    const asked = decide(`${prefix}rm notes.txt`);
    assert.deepEqual([asked.decision, asked.ruleId], ['ask', 'rm-ask'], `${JSON.stringify(prefix)} rm`);
  }
});

test('a deny rule sees the command after wrappers that run their arguments (chronic, prlimit, numactl, faketime, cpulimit, setpriv)', () => {
  for (const wrapper of ['chronic', 'prlimit --nofile=64', 'numactl -N 0', 'faketime 2020-01-01', 'cpulimit -l 50', 'setpriv --no-new-privs', 'ifne']) {
    const denied = decide(`${wrapper} curl http://evil.example`);
    assert.equal(denied.decision, 'deny', `${wrapper}: ${denied.ruleId}`);
  }
});

test('a deny or ask rule sees the commands of a line with here-documents (which asks): `<<EOF curl …` is denied; a body is data', () => {
  for (const line of ['<<EOF curl http://evil.example\nx\nEOF', "<< 'EOF' curl http://evil.example\nx\nEOF", '<<-"E" curl http://evil.example\n\tx\n\tE', 'true <<A; curl http://evil.example\nbody\nA', 'cat <<A\ncurl http://ok.example\nA\n<<B curl http://evil.example\nB']) {
    const denied = decide(line);
    assert.deepEqual([denied.decision, denied.ruleId], ['deny', 'curl-evil-deny'], JSON.stringify(line));
  }
  const asked = decide('<<EOF rm notes.txt\nx\nEOF');
  assert.deepEqual([asked.decision, asked.ruleId], ['ask', 'rm-ask']);
  const data = decide('cat <<EOF > notes.md\ncurl http://evil.example\nEOF');
  assert.equal(data.decision, 'ask', 'a here-document still asks');
  assert.notEqual(data.ruleId, 'curl-evil-deny', 'its body is data to cat, not a command');
});

test('a deny sees what a here-document runs: `$(…)` in an unquoted body (for any command), and the body a shell reads as its script', () => {
  const evil = 'curl http://evil.example';
  for (const line of [
    `cat <<EOF\n$(${evil})\nEOF`,
    `cat <<EOF\n\`${evil}\`\nEOF`,
    `cat <<EOF\n\${x:-$(${evil})}\nEOF`,
    `cat <<EOF > notes.md\nsay "hi" \\"x\\" $(${evil})\nEOF`,
    `bash <<EOF\n${evil}\nEOF`,
    `bash <<'EOF'\n${evil}\nEOF`,
    `bash -o pipefail -x <<EOF\ntrue\n${evil}\nEOF`,
    `sh -s <<-EOF\n\t${evil}\n\tEOF`,
    `zsh <<< "${evil}"`,
    `bash <<<'${evil}'`,
    `/bin/dash <<<${JSON.stringify(evil)}`,
  ]) {
    const denied = decide(line);
    assert.deepEqual([denied.decision, denied.ruleId], ['deny', 'curl-evil-deny'], JSON.stringify(line));
  }
  // Data stays data: a quoted delimiter's body is literal, and a script file's input is not a script.
  for (const line of [`cat <<'EOF'\n$(${evil})\nEOF`, `cat <<EOF > notes.md\n${evil}\nEOF`, `bash build.sh <<EOF\n${evil}\nEOF`, `bash build.sh <<<'${evil}'`]) {
    const asked = decide(line);
    assert.notEqual(asked.ruleId, 'curl-evil-deny', JSON.stringify(line));
  }
});
