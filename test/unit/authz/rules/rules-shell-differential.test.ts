import '../../../helpers/own-home';
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { splitShell } from '../../../../src/authz/rules/shell-split';
import { strictViews } from '../../../../src/authz/rules/shell-views';
import { ASSIGNMENT } from '../../../../src/authz/rules/shell-words';
import { bashOracle } from '../../../helpers/bash-oracle';
import { makeTempDir } from '../../../helpers/tmp';
import { prng } from '../../../helpers/prng';
import { SHELL_BYPASS_CORPUS } from '../shell-bypass-corpus';
import { variant } from '../shell-variants';

/**
 * Differential test: the splitter must report every command bash runs. Each command line
 * (the bypass corpus, the regression cases below and seeded random variants) is run by
 * real bash (helpers/bash-oracle.ts), which records the name of every command it tried to
 * run. The test fails when the splitter split the line (so an allow rule could apply) but
 * none of the commands it reported has that name as its command word in any strict view,
 * nor a command word bash computes (`$x`, `$(…)`, which only a rule accepting `$` allows).
 * A line the splitter fails on (or one with a `sh -c`/`eval`/`trap` script it cannot split)
 * asks, so anything bash runs from it is fine.
 *
 * LEGION_SHELL_DIFF_SEED replays a run; LEGION_SHELL_DIFF_LONG=1 draws a random seed and
 * runs many more variants.
 */
const LONG = process.env.LEGION_SHELL_DIFF_LONG === '1';
const SEED = Number(process.env.LEGION_SHELL_DIFF_SEED ?? (LONG ? Math.floor(Math.random() * 2 ** 31) : 20261123));
const VARIANTS = LONG ? 20_000 : 400;

/** Lines bash and an earlier splitter disagreed on. */
const REGRESSIONS: readonly string[] = [
  `echo "\${v->(echo '$(m6 arg "q" 's')')}"`,
  `echo "\${v:-\${u:-<(echo '$(m0)')}}"`,
  'eval echo ${v:-\\<(m0>out)}',
  `trap 'echo \${v:=<(git status \${v=>(m3 -rf x)})}' EXIT`,
  `eval 'echo $(( 1 + $(echo "\${v:?>(m9)}") ))'`,
  `trap '{m4,$(v=a; echo \${v%>(m3)})}' EXIT`,
  `echo "\${x:-'$(m1)'}"`,
  `echo "\${x:-'}'$(m1)}"`,
  `echo \${a['$(m1)']}`,
  `echo \${x:='$(m1)'}\${x@P}`,
  `echo \${y:='a[$(m1)]'}\${a[y]}`,
  `echo \${y:='a[$(m1)]'}\${!y}`,
  `echo \${y:='a[$(m1)]'} $[y]`,
  '{m1,-rf,x}',
  'sudo {m1,-rf,x}',
  `trap 'm1' EXIT`,
  `x='$(m1)'; echo \${x@P}`,
  `y='a[$(m1)]'; echo \${!y}`,
  `y='a[$(m1)]'; echo \${a[y]}`,
  `v=abc; y='a[$(m1)]'; echo \${v:y}`,
  `y='a[$(m1)]'; echo $[y]`,
];

const temp = await makeTempDir('legion-shell-diff-');
after(() => temp.cleanup());
const oracle = bashOracle(temp.dir);

const REDIRECTION = /^\d*(&>>?|<<<|<>|[<>]&|>>|>\||<|>)/;

function reportedNames(command: string): { names: Set<string>; dynamic: boolean } | null {
  const split = splitShell(command);
  if (!split.ok) return null;
  const names = new Set<string>();
  let dynamic = false;
  for (const part of split.commands) {
    if (part.kind === 'compound') continue;
    const words = part.words.filter((w) => !REDIRECTION.test(w));
    while (words.length > 0 && ASSIGNMENT.test(words[0]!)) words.shift();
    const first = words[0] ?? '';
    if (/[$`]/.test(first)) dynamic = true;
    names.add(first);
    const opaque: string[] = [];
    const views = strictViews(part, 0, opaque);
    if (opaque.length > 0) return null; // a script it cannot split: the line asks
    for (const view of views) {
      const word = view.split(/\s+/).find((w) => !REDIRECTION.test(w)) ?? '';
      names.add(word);
      names.add(word.slice(word.lastIndexOf('/') + 1));
    }
  }
  return { names, dynamic };
}

function unreported(commands: readonly string[]): string[] {
  const runs = oracle.run(commands);
  const problems: string[] = [];
  commands.forEach((command, i) => {
    const ran = runs[i]!;
    const reported = reportedNames(command);
    if (!reported || reported.dynamic) return;
    const missing = ran.filter((name) => !reported.names.has(name));
    if (missing.length > 0) problems.push(`${JSON.stringify(command)} ran ${JSON.stringify(missing)} unreported (split: ${JSON.stringify(splitShell(command).commands.map((c) => c.text))})`);
  });
  return problems;
}

test(`differential: bash runs nothing the splitter does not report (corpus + regressions, ${oracle.mode})`, { timeout: 120_000 }, () => {
  const commands = [...SHELL_BYPASS_CORPUS.map((a) => a.command).filter((c) => c.length < 1000), ...REGRESSIONS];
  assert.deepEqual(unreported(commands), []);
});

test(`differential: seeded variants (seed ${SEED}, ${VARIANTS} lines, ${oracle.mode})`, { timeout: LONG ? 3_600_000 : 180_000 }, () => {
  console.log(`shell differential seed ${SEED} (LEGION_SHELL_DIFF_SEED=${SEED} replays)`);
  const rand = prng(SEED);
  const lines = Array.from({ length: VARIANTS }, () => variant(rand));
  const problems: string[] = [];
  for (let i = 0; i < lines.length; i += 500) problems.push(...unreported(lines.slice(i, i + 500)));
  assert.deepEqual(problems, [], `seed ${SEED}`);
});

test('differential: the oracle sees what bash runs (so the test can fail)', () => {
  const [plain, hidden, quoted] = oracle.run(['m1; echo $(m2)', `echo "\${x:-'$(m3)'}"`, "echo '$(m4)'"]);
  assert.deepEqual(plain, ['m1', 'm2']);
  assert.deepEqual(hidden, ['m3']);
  assert.deepEqual(quoted, []);
});
