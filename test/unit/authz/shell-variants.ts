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
];

const LEAVES: readonly string[] = ['M', 'M -rf x', 'M arg "q" \'s\'', 'M>out', 'M 2>&1'];

function marker(rand: Rand): string {
  return `m${Math.floor(rand() * 10)}`;
}

function fill(rand: Rand, template: string, inner: string): string {
  return template.replace(/\bM\b/g, () => marker(rand)).replace(/C/g, () => inner);
}

/** One command line: a marker nested in up to `depth` random contexts. */
export function variant(rand: Rand, depth = 3): string {
  let line = pick(rand, LEAVES).replace(/\bM\b/g, () => marker(rand));
  const levels = 1 + Math.floor(rand() * depth);
  for (let i = 0; i < levels; i++) line = fill(rand, pick(rand, CONTEXTS), line);
  return line;
}
