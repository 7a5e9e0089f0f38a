/**
 * Generated command lines for the differential test against bash (shell-differential.test.ts):
 * marker commands `m0`…`m9` nested at random in the contexts where bash expands, or may
 * expand, a substitution: quoted and unquoted `${…}` operators with single and double
 * quotes inside, subscripts, process substitution, groups, lists, keywords, brace and
 * arithmetic expansion. The text is pasted together without regard for quoting, on purpose:
 * broken quoting is part of what is being tested (the property holds for any string).
 */
export type Rand = () => number;

const pick = <T>(rand: Rand, items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;

// `C` is replaced by the inner command line, `M` by a marker command.

/**
 * Parameter-expansion contexts (issue #28): every operator that takes a word, with process
 * substitution (and command substitution) in the word, nested, quoted and unquoted. Bash runs
 * `<(…)` inside an unquoted `${x:-…}`; an earlier splitter did not list that context.
 */
export const EXPANSION_CONTEXTS: readonly string[] = [
  ...['${v:-W}', '${v-W}', '${v:=W}', '${v=W}', '${v:+W}', '${v+W}', '${v#W}', '${v##W}', '${v%W}', '${v%%W}', '${v/a/W}', '${v//W/b}', '${v/#W}', '${v:?W}', '${v^^W}', '${v,W}', '${v:-${u:-W}}', '${v:+x${u-W}}']
    .flatMap((e) => [`echo ${e}`, `v=a; echo ${e}`, `echo "${e}"`, `echo x${e}y`, `git status ${e}`])
    .flatMap((line) => [line.replace('W', '<(C)'), line.replace('W', '>(C)')]),
  'echo ${v:-"<(C)"}',
  "echo ${v:-'<(C)'}",
  'echo ${v:-\\<(C)}',
  'echo ${v:-$(C)}<(M)',
  'echo ${v:-`C`}',
  'echo "${v:-$(C)}"',
  'v=a; echo ${v/a/$(C)}',
  'echo ${v:-${u:->(C)}} ${w:-<(M)}',
  'M ${v:-<(C)} | M',
  'M ${v:->(C)} && M',
];

const CONTEXTS: readonly string[] = [
  'echo $(C)',
  'echo `C`',
  'echo "$(C)"',
  'echo "`C`"',
  'echo ${v:-$(C)}',
  'echo "${v:-$(C)}"',
  `echo "\${v:-'$(C)'}"`,
  `echo \${v:-'$(C)'}`,
  `echo "\${v:+x}\${u:-"'$(C)'"}"`,
  `echo "\${v-'\`C\`'}"`,
  `echo "\${v:-'}'$(C)}"`,
  `echo "\${v:-\\'$(C)}"`,
  `echo "\${v:-"$(C)"}"`,
  `echo "\${v:-\${u:-'$(C)'}}"`,
  `echo "\${v:-'\${u:-$(C)}'}"`,
  `v=a; echo "\${v/a/'$(C)'}"`,
  `v=a; echo "\${v/'a'/$(C)}"`,
  `v=a; echo \${v/a/'$(C)'}`,
  `echo "\${v#'$(C)'}"`,
  `echo "\${v%%"$(C)"}"`,
  `echo \${a['$(C)']}`,
  'echo ${a[$(C)]}',
  `echo "\${a['$(C)']}"`,
  `echo \${v:='$(C)'}\${v@P}`,
  `echo \${y:='a[$(C)]'}\${!y}`,
  `echo \${y:='a[$(C)]'} \${v:y}`,
  `x='$(C)'; echo \${x@P}`,
  `y='a[$(C)]'; echo \${!y}`,
  `y='a[$(C)]'; echo \${a[y]}`,
  `v=abc; y='a[$(C)]'; echo \${v:y}`,
  `v=abc; y='a[$(C)]'; echo "\${v:1:y}"`,
  `y='a[$(C)]'; echo $[y]`,
  `echo $[ 1 + $(C) ]`,
  'echo $(( 1 + $(C) ))',
  'echo {a,$(C)}',
  '{M,$(C)}',
  'echo ${#v} $(C)',
  'echo "${v:0:1}$(C)"',
  '(C)',
  '{ C; }',
  'C | M',
  'C && M',
  'C || M',
  'C; M',
  'C & M',
  'M <(C)',
  'echo >(C)',
  'M $(C) >out',
  'x=$(C) M',
  'if C; then M; fi',
  'for i in $(C); do M; done',
  '! C',
  'time C',
  'eval C',
  `eval 'C'`,
  `trap 'C' EXIT`,
  'echo $"$(C)"',
  `echo $'\\x41' $(C)`,
  'echo "$(echo "$(C)")"',
  'echo \\$(C)',
  `echo '$(C)'`,
  'echo "\\$(C)"',
  'M \\\nC',
  'M\nC',
  'M # C',
  ...EXPANSION_CONTEXTS,
];

const LEAVES: readonly string[] = ['M', 'M -rf x', 'M arg "q" \'s\'', 'M>out', 'M 2>&1'];

function marker(rand: Rand): string {
  return `m${Math.floor(rand() * 10)}`;
}

function fill(rand: Rand, template: string, inner: string): string {
  return template.replace(/\bM\b/g, () => marker(rand)).replace(/C/g, () => inner);
}

/** One command line: a marker nested in up to `depth` random contexts (`contexts`: all by default). */
export function variant(rand: Rand, depth = 3, contexts: readonly string[] = CONTEXTS): string {
  let line = pick(rand, LEAVES).replace(/\bM\b/g, () => marker(rand));
  const levels = 1 + Math.floor(rand() * depth);
  for (let i = 0; i < levels; i++) line = fill(rand, pick(rand, rand() < 0.5 ? contexts : CONTEXTS), line);
  return line;
}

/**
 * Lines that are plain words, or nearly (one character away), with markers where a command
 * runs: what an allow rule may see. Mutations insert a character of shell syntax at random.
 */
export function nearlyPlain(rand: Rand): string {
  const words = ['echo', 'git status', 'M', 'M -x', "'q u'", '"d q"', 'a\\ b', '2>&1', '>/dev/null', '*.ts', 'x=1', '--opt=v', 'HEAD~1'];
  const seps = [' ; ', ' && ', ' || ', ' | ', '\n'];
  let line = '';
  const commands = 1 + Math.floor(rand() * 3);
  for (let c = 0; c < commands; c++) {
    if (c > 0) line += pick(rand, seps);
    line += pick(rand, ['echo', 'git status', 'M']);
    const n = Math.floor(rand() * 4);
    for (let k = 0; k < n; k++) line += ` ${pick(rand, words)}`;
  }
  const syntax = ['$', '$(M)', '`M`', '<(M)', '>(M)', '${v:-<(M)}', '~', '{', '}', '(', ')', '#', '&', '!', '=', '\\', "'", '"', '*', '<', '>', '\n', ';', '|', '$[M]', '$((1))'];
  const mutations = Math.floor(rand() * 3);
  for (let m = 0; m < mutations; m++) {
    const at = Math.floor(rand() * (line.length + 1));
    line = line.slice(0, at) + pick(rand, syntax) + line.slice(at);
  }
  return line.replace(/\bM\b/g, () => marker(rand));
}
