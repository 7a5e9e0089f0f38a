import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { curlEvilRules, shell } from '../../../helpers/rules';

/**
 * A shell reading its script from standard input runs a here-document's or here-string's body
 * (docs/shell-rules.md#deny-and-ask-rules): every shape of it must show the body to a deny
 * rule, or the line only asks, and an ask can be granted by an agent approver.
 */
const rules = curlEvilRules();
const decide = (command: string) => shell(rules, command);
const evil = 'curl http://evil.example';

test('a shell reading its script from stdin shows the here-document or here-string to deny rules, in every shape bash accepts', () => {
  for (const line of [
    // -s: the operands are the script's arguments, the script still comes from stdin
    `bash -s arg <<EOF\n${evil}\nEOF`,
    `bash -s -- arg <<EOF\n${evil}\nEOF`,
    `sh -xs one two <<'EOF'\n${evil}\nEOF`,
    // `--` ends the options; with no operand after it the script is stdin
    `bash -- <<EOF\n${evil}\nEOF`,
    `bash -x -- <<<'${evil}'`,
    // options that take an argument
    `bash --rcfile /dev/null <<EOF\n${evil}\nEOF`,
    `bash --init-file x.rc -i <<EOF\n${evil}\nEOF`,
    // stdin named by its descriptor
    `bash 0<<EOF\n${evil}\nEOF`,
    `bash 0<<<'${evil}'`,
    // the script file is standard input
    `bash /dev/stdin <<EOF\n${evil}\nEOF`,
    `sh /dev/fd/0 <<<'${evil}'`,
    `source /dev/stdin <<EOF\n${evil}\nEOF`,
    `. /dev/stdin <<<'${evil}'`,
    // su and runuser take a user, not a script: the shell they start reads stdin
    `su <<EOF\n${evil}\nEOF`,
    `su - root <<EOF\n${evil}\nEOF`,
    `runuser -u nobody -- sh <<EOF\n${evil}\nEOF`,
    // here-document delimiters quoted with a backslash, or made of other characters
    `bash <<\\EOF\n${evil}\nEOF`,
    `bash <<@\n${evil}\n@`,
    `bash <<+\n${evil}\n+`,
    `bash <<END,1\n${evil}\nEND,1`,
    `bash <<'a b'\n${evil}\na b`,
    // a carriage return is part of the delimiter word (not a metacharacter): the body ends at `EOF\r`
    `cat <<'EOF'\r\nx\r\nEOF\r\n${evil}`,
    // a here-document inside a here-document's script
    `bash <<A\nbash <<B\n${evil}\nB\nA`,
    `bash <<'A'\ncat <<B\n$(${evil})\nB\nA`,
  ]) {
    // Denied by the user's rule, or by a shipped one that sees the body too (no-pipe-to-shell).
    const denied = decide(line);
    assert.equal(denied.decision, 'deny', `${JSON.stringify(line)}: ${denied.reason}`);
    assert.ok(denied.ruleId === 'curl-evil-deny' || denied.ruleId === 'no-pipe-to-shell', JSON.stringify(line));
  }
});

test('data stays data: a script file\'s input, another descriptor, a quoted body for a command that is not a shell', () => {
  for (const line of [
    `bash build.sh <<EOF\n${evil}\nEOF`,
    `bash -- build.sh <<<'${evil}'`,
    `bash 3<<<'${evil}' build.sh`,
    `bash --rcfile x.rc build.sh <<EOF\n${evil}\nEOF`,
    `cat <<\\EOF\n$(${evil})\nEOF`,
    `git commit -F - <<'EOF'\nfix: ${evil}\nEOF`,
  ]) {
    const outcome = decide(line);
    assert.notEqual(outcome.ruleId, 'curl-evil-deny', JSON.stringify(line));
  }
});
