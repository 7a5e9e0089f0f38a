import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SHIPPED_RULES, rulesFrom, shell } from '../../../helpers/rules';

/**
 * A line the splitter refuses asks, and an ask can be granted (by an agent approver too): a deny
 * rule must still see the commands such a line runs (docs/shell-rules.md#deny-and-ask-rules,
 * src/authz/rules/shell-refused.ts) — after a comment, around arithmetic, inside a function, in a
 * case pattern, after a `[[ =~ ]]` group or an extglob pattern, inside an array.
 */
const USER = `version: 1
rules:
  - { id: curl-evil-deny, decision: deny, tool: shell, match: { command: "curl *evil*" } }
  - { id: curl-allow, decision: allow, tool: shell, match: { command: "curl *" } }
`;
/** The shipped rules with USER's above them. */
const rules = rulesFrom(readFileSync(SHIPPED_RULES, 'utf8'), USER);
const decide = (command: string) => shell(rules, command);

test('a deny sees the commands of a line refused for a comment, arithmetic, a function definition or parentheses it does not parse (case, `[[ =~ ]]` groups, extglob, arrays)', () => {
  const evil = 'curl http://evil.example';
  for (const line of [
    `true # a comment\n${evil}`,
    `echo x # <<EOF\n${evil}`,
    `echo "#"; true # c\n${evil}`,
    `echo $((1+1)); ${evil}`,
    `echo $(( $(${evil}) ))`,
    `(( x = $(${evil}) ))`,
    `f() { ${evil}; }; f`,
    `f () ( ${evil} ); f`,
    `function g { ${evil}; }; g`,
    `function g() { ${evil}; }; g`,
    `cat <<EOF\n# heading $(${evil})\nEOF`,
    `bash -c 'true # x\n${evil}'`,
    // Parentheses the splitter does not parse: case patterns, a regex group, extglob, arrays.
    `case a in a) ${evil};; esac`,
    `case a in (a) true;; *) ${evil};; esac`,
    `case a in a) true;& b) ${evil};;& esac`,
    `[[ a =~ (b) ]] && ${evil}`,
    `[[ a =~ ^(b|c)$ ]] || ${evil}`,
    `shopt -s extglob\nls !(x); ${evil}`,
    `echo @(a|b)|${evil}`,
    `arr=([0]=$(${evil}))`,
    `x=(); x+=(1 \`${evil}\`)`,
    `declare -A m=([k]="$(${evil})")`,
    `bash -c 'case a in a) ${evil};; esac'`,
  ]) {
    const denied = decide(line);
    assert.deepEqual([denied.decision, denied.ruleId], ['deny', 'curl-evil-deny'], JSON.stringify(line));
  }
  // Quoted text is not a comment; a quoted delimiter's body is data.
  for (const line of [`echo '(a) ${evil}'`, `echo "x) ${evil};;"`, `echo '# ${evil}'`, `echo "a # b" # ${evil}`, `cat <<'EOF'\n# $(${evil})\nEOF`]) {
    assert.notEqual(decide(line).ruleId, 'curl-evil-deny', JSON.stringify(line));
  }
});

test('the rewrites stay linear on a long hostile line', () => {
  const userOnly = rulesFrom(USER);
  for (const line of [`${'('.repeat(16_000)}`, `${')'.repeat(16_000)}`, `${'x=('.repeat(5_000)}`, `${';;'.repeat(8_000)}`, `# ${'a'.repeat(16_000)}`, `${'a'.repeat(16_000)} #`, `${'((a'.repeat(5_000)}`, `${'f() '.repeat(4_000)}`, `${'function x '.repeat(1_400)}`]) {
    const started = process.hrtime.bigint();
    shell(userOnly, line);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    assert.ok(ms < 2_000, `${line.slice(0, 12)}…: ${ms.toFixed(0)} ms`);
  }
});
