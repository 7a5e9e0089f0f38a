import '../../../helpers/own-home';
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { parsePlain } from '../../../../src/authz/rules/shell-plain';
import { compileTextGlob } from '../../../../src/authz/rules/glob';
import { bashOracle } from '../../../helpers/bash-oracle';
import { makeTempDir } from '../../../helpers/tmp';
import { prng } from '../../../helpers/prng';
import { rulesFrom, shell } from '../../../helpers/rules';
import { basename, isPrefix } from '../../../../src/authz/rules/shell-words';
import { EXPANSION_CONTEXTS, nearlyPlain, variant } from '../shell-variants';

/**
 * Differential test of allow decisions against real bash (issue #28). For every generated
 * line (parameter-expansion contexts with process and command substitution, quoted and not,
 * nested; lines of plain words with shell syntax inserted at random), if Legion allows it:
 *   - under an allow rule for every plain command, bash runs only the programs the plain
 *     parse names (nothing hidden in a word), unless one of them runs its arguments as code
 *     by design (`eval`, `trap`, `source`, `sh -c`, `sudo`, `env`…: allowing such a program
 *     allows its arguments, which is why the docs warn against `allow "eval *"`);
 *   - under `allow "echo *"` and `allow "git status*"`, bash runs no marker `m0`…`m9`.
 * The oracle (helpers/bash-oracle.ts) runs each line in bubblewrap where it can, with an
 * empty PATH, and logs every external command bash tried to run.
 * LEGION_SHELL_DIFF_SEED replays a run; LEGION_SHELL_DIFF_LONG=1 runs many more lines.
 */
const LONG = process.env.LEGION_SHELL_DIFF_LONG === '1';
const SEED = Number(process.env.LEGION_SHELL_DIFF_SEED ?? (LONG ? Math.floor(Math.random() * 2 ** 31) : 20261127));
const LINES = LONG ? 20_000 : 700;

const ANY_PLAIN = rulesFrom('version: 1\nrules:\n  - { id: any-plain, decision: allow, tool: shell }\n');
const USER_RULES = rulesFrom(
  'version: 1\nrules:\n  - { id: echo, decision: allow, tool: shell, match: { command: "echo *" } }\n  - { id: git-status, decision: allow, tool: shell, match: { command: "git status*" } }\n',
);

/** Builtins that run an argument as code, besides the wrappers and keywords of shell-words.ts. */
const RUNS_ARGUMENTS = new Set(['trap', 'source', '.']);

const temp = await makeTempDir('legion-allow-diff-');
after(() => temp.cleanup());
const oracle = bashOracle(temp.dir);

/** The lines whose allow decision bash contradicts, with what bash ran. */
function contradicted(lines: readonly string[]): { problems: string[]; allowed: number } {
  const runs = oracle.run(lines);
  const problems: string[] = [];
  let allowed = 0;
  lines.forEach((line, i) => {
    const ran = runs[i]!;
    const parsed = parsePlain(line);
    const runsArguments = parsed.plain && parsed.commands.some((c) => RUNS_ARGUMENTS.has(c.argv[0]!) || isPrefix(basename(c.argv[0]!)));
    if (!runsArguments && shell(ANY_PLAIN, line).decision === 'allow') {
      allowed++;
      const named = new Set(parsed.plain ? parsed.commands.map((c) => c.argv[0]!.replace(/\n/g, '\\n')) : []);
      const hidden = ran.filter((name) => !named.has(name));
      if (hidden.length > 0) problems.push(`any-plain allowed ${JSON.stringify(line)}; bash ran ${JSON.stringify(hidden)} not in its words`);
    }
    if (shell(USER_RULES, line).decision === 'allow') {
      allowed++;
      const markers = ran.filter((name) => /^m\d$/.test(name));
      if (markers.length > 0) problems.push(`"echo *" allowed ${JSON.stringify(line)}; bash ran ${JSON.stringify(markers)}`);
    }
  });
  return { problems, allowed };
}

test(`allow differential: generated lines (seed ${SEED}, ${LINES} lines, ${oracle.mode})`, { timeout: LONG ? 3_600_000 : 120_000 }, () => {
  console.log(`shell allow differential seed ${SEED} (LEGION_SHELL_DIFF_SEED=${SEED} replays)`);
  const rand = prng(SEED);
  const lines = Array.from({ length: LINES }, (_, i) => (i % 2 === 0 ? variant(rand, 2, EXPANSION_CONTEXTS) : nearlyPlain(rand)));
  const problems: string[] = [];
  let allowed = 0;
  for (let i = 0; i < lines.length; i += 500) {
    const batch = contradicted(lines.slice(i, i + 500));
    problems.push(...batch.problems);
    allowed += batch.allowed;
  }
  assert.deepEqual(problems, [], `seed ${SEED}`);
  // The property is only tested where something is allowed.
  assert.ok(allowed >= LINES / 10, `only ${allowed} allow decisions`);
});

test('allow differential: the oracle sees what a source-text glob would have allowed (so the test can fail)', () => {
  const echoGlob = compileTextGlob('echo *', false);
  assert.ok(echoGlob.ok);
  const lines = ['echo ${x:-<(m1)}', 'echo ${x:->(m2)}', 'echo ${x-<(m3)}', 'git status ${x:-<(m4)}'];
  const runs = oracle.run(lines);
  assert.deepEqual(runs.map((r) => r.filter((n) => /^m\d$/.test(n))), [['m1'], ['m2'], ['m3'], ['m4']]);
  assert.deepEqual(oracle.run(['"a\nb"']), [['a\\nb']]); // a name with a newline is one name
  assert.deepEqual(oracle.run(['m1\\\n', 'm2\n\n']), [['m1'], ['m2']]); // trailing newlines reach bash as written
  assert.ok(echoGlob.test(lines[0]!)); // the old text match allowed it
  for (const line of lines) assert.notEqual(shell(USER_RULES, line).decision, 'allow', line);
});
