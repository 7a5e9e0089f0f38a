import type { PlainCommand } from './shell-plain';

/**
 * The read-only shell commands a `{ readOnly: [...] }` allow pattern can name, each with the
 * grammar of its arguments (docs/shell-rules.md#read-only-commands). An allowed read may only
 * read what `file_read` may read, so every argument that is (or may be) a path, and every
 * option that takes a path, is checked (PathChecks); an option not listed here, a
 * file-name pattern, or a value of the wrong form makes the command not allowed (it asks).
 * The lists are allow-lists on purpose: a new option of git or coreutils asks until listed.
 */

/** How an option's value is read: `flag` takes none, `optional` only attached (`--x=v`, `-xv`). */
type ValueKind = 'flag' | 'optional' | 'number' | 'text' | 'path';
/** How a positional argument is read: `git` = revision or path (`rev:path` checks both parts). */
type PositionalKind = 'path' | 'text' | 'none' | 'git' | RegExp;

interface Grammar {
  readonly short: Readonly<Record<string, ValueKind>>;
  readonly long: Readonly<Record<string, ValueKind>>;
  readonly positional: PositionalKind;
  /** `-20` is a count (head, tail, git log). */
  readonly numericShort?: boolean;
}

/**
 * A path is readable when both pass: `written` first for every path, then `resolved`. Each
 * returns a reason the path may not be read, or null. Methods, not callbacks: a caller's
 * checks are one object per decision, not a closure per check.
 */
export interface PathChecks {
  /** The path as written, without the filesystem (confinement, the rules for `file_read`). */
  written(path: string): string | null;
  /** The path with its symbolic links followed (reads the filesystem; only once `written` passed). */
  resolved(path: string): string | null;
}

/** Which of the two checks of PathChecks an argument goes through: `written`, or `resolved` once every path passed `written`. */
type Step = 'written' | 'resolved';

function checkPath(checks: PathChecks, step: Step, path: string): string | null {
  return step === 'written' ? checks.written(path) : checks.resolved(path);
}

const NUMBER = /^[+-]?\d+[A-Za-z]{0,3}$/;

const flags = (letters: string, kind: ValueKind = 'flag'): Record<string, ValueKind> => Object.fromEntries([...letters].map((c) => [c, kind]));
const longs = (names: string, kind: ValueKind): Record<string, ValueKind> => Object.fromEntries(names.split(/\s+/).filter(Boolean).map((n) => [`--${n}`, kind]));

const HEAD_TAIL_LONG = { ...longs('quiet silent verbose zero-terminated', 'flag'), ...longs('lines bytes', 'number') };

const DIFF_FLAGS = longs(
  'cached staged shortstat numstat name-only name-status summary patch no-patch raw minimal patience histogram no-color ' +
    'ignore-all-space ignore-space-change ignore-space-at-eol ignore-blank-lines ignore-cr-at-eol check no-renames exit-code quiet full-index ' +
    'merge-base ita-invisible-in-index compact-summary dirstat-by-file cumulative no-ext-diff no-textconv',
  'flag',
);
const DIFF_OPTIONAL = longs('stat color word-diff find-renames find-copies abbrev dirstat color-moved', 'optional');
const DIFF_TEXT = { ...longs('diff-filter word-diff-regex src-prefix dst-prefix', 'text'), ...longs('unified inter-hunk-context stat-width', 'number') };
const DIFF_SHORT = { ...flags('psuRwbz'), U: 'number' as ValueKind, M: 'optional' as ValueKind, C: 'optional' as ValueKind, B: 'optional' as ValueKind };

const LOG_FLAGS = longs(
  'oneline graph all reverse first-parent merges no-merges abbrev-commit no-abbrev-commit follow full-history topo-order date-order ' +
    'left-right cherry-pick cherry-mark boundary no-decorate source walk-reflogs simplify-by-decoration dense sparse no-walk ancestry-path ' +
    'show-linear-break parents children log-size no-notes mailmap use-mailmap regexp-ignore-case basic-regexp extended-regexp fixed-strings all-match invert-grep',
  'flag',
);
const LOG_OPTIONAL = longs('decorate branches tags remotes pretty', 'optional');
const LOG_TEXT = {
  ...longs('format since until after before author committer grep date', 'text'),
  ...longs('max-count skip min-parents max-parents', 'number'),
};
const LOG_SHORT = { ...DIFF_SHORT, n: 'number' as ValueKind, g: 'flag' as ValueKind, i: 'flag' as ValueKind, E: 'flag' as ValueKind, F: 'flag' as ValueKind, S: 'text' as ValueKind, G: 'text' as ValueKind };

export const READ_ONLY_COMMANDS: Readonly<Record<string, Grammar>> = {
  pwd: { short: flags('LP'), long: {}, positional: 'none' },
  echo: { short: flags('neE'), long: {}, positional: 'text' },
  true: { short: {}, long: {}, positional: 'text' },
  whoami: { short: {}, long: {}, positional: 'none' },
  uname: { short: flags('asnrvmpio'), long: longs('all kernel-name nodename kernel-release kernel-version machine processor hardware-platform operating-system', 'flag'), positional: 'none' },
  date: {
    short: { ...flags('uR'), d: 'text', I: 'optional', r: 'path' },
    long: { ...longs('utc universal rfc-email', 'flag'), ...longs('iso-8601 rfc-3339', 'optional'), ...longs('date', 'text'), ...longs('reference', 'path') },
    positional: /^\+/,
  },
  cat: { short: flags('AbeEnstTuv'), long: longs('show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting', 'flag'), positional: 'path' },
  head: { short: { ...flags('qvz'), n: 'number', c: 'number' }, long: HEAD_TAIL_LONG, positional: 'path', numericShort: true },
  tail: {
    short: { ...flags('qvzfF'), n: 'number', c: 'number', s: 'number' },
    long: { ...HEAD_TAIL_LONG, ...longs('retry', 'flag'), ...longs('follow', 'optional'), ...longs('sleep-interval pid max-unchanged-stats', 'number') },
    positional: 'path',
    numericShort: true,
  },
  wc: { short: flags('clmwL'), long: { ...longs('bytes chars lines words max-line-length', 'flag'), ...longs('total', 'text') }, positional: 'path' },
  ls: {
    // No -L/--dereference: a listing follows only the links it was given (and those are checked).
    short: { ...flags('aAbBcCdfFgGhHiklmnNopqQrRsStuUvxXZ1'), I: 'text', T: 'number', w: 'number' },
    long: {
      ...longs(
        'all almost-all author escape directory human-readable si inode numeric-uid-gid literal hide-control-chars show-control-chars ' +
          'quote-name recursive reverse size group-directories-first no-group full-time context zero dereference-command-line',
        'flag',
      ),
      ...longs('color classify hyperlink', 'optional'),
      ...longs('sort format time-style time block-size ignore hide indicator-style quoting-style', 'text'),
      ...longs('width tabsize', 'number'),
    },
    positional: 'path',
  },
  'git status': {
    short: { ...flags('sbvz'), u: 'optional' },
    long: {
      ...longs('short branch long verbose show-stash ahead-behind no-ahead-behind renames no-renames column no-column null', 'flag'),
      ...longs('porcelain untracked-files ignored ignore-submodules find-renames', 'optional'),
    },
    positional: 'path',
  },
  'git diff': { short: DIFF_SHORT, long: { ...DIFF_FLAGS, ...DIFF_OPTIONAL, ...DIFF_TEXT }, positional: 'git' },
  'git log': { short: LOG_SHORT, long: { ...DIFF_FLAGS, ...DIFF_OPTIONAL, ...DIFF_TEXT, ...LOG_FLAGS, ...LOG_OPTIONAL, ...LOG_TEXT }, positional: 'git', numericShort: true },
  'git show': { short: LOG_SHORT, long: { ...DIFF_FLAGS, ...DIFF_OPTIONAL, ...DIFF_TEXT, ...LOG_FLAGS, ...LOG_OPTIONAL, ...LOG_TEXT }, positional: 'git', numericShort: true },
  'git blame': {
    short: { ...flags('bfnsewpltc'), L: 'text', M: 'optional', C: 'optional', S: 'path' },
    long: {
      ...longs('root show-stats show-name show-number show-email porcelain line-porcelain incremental color-lines color-by-age', 'flag'),
      ...longs('abbrev', 'optional'),
      ...longs('ignore-rev date', 'text'),
      ...longs('contents ignore-revs-file', 'path'),
    },
    positional: 'git',
  },
  'git ls-files': {
    short: { ...flags('cdmoiskuztvf'), x: 'text', X: 'path' },
    long: {
      ...longs(
        'cached deleted modified others ignored stage unmerged killed directory no-empty-directory eol full-name recurse-submodules ' +
          'error-unmatch debug deduplicate sparse exclude-standard',
        'flag',
      ),
      ...longs('abbrev', 'optional'),
      ...longs('exclude format with-tree', 'text'),
      ...longs('exclude-from', 'path'),
    },
    positional: 'path',
  },
  'git rev-parse': {
    short: flags('q'),
    long: {
      ...longs(
        'show-toplevel show-prefix show-cdup git-dir git-common-dir absolute-git-dir is-inside-work-tree is-inside-git-dir is-bare-repository ' +
          'is-shallow-repository verify quiet symbolic symbolic-full-name all show-superproject-working-tree local-env-vars',
        'flag',
      ),
      ...longs('short abbrev-ref branches tags remotes', 'optional'),
    },
    positional: 'git',
  },
  'git branch': {
    short: flags('arvl'),
    long: { ...longs('list all remotes verbose show-current no-color', 'flag'), ...longs('color', 'optional') },
    positional: 'none',
  },
};

export const READ_ONLY_NAMES: readonly string[] = Object.keys(READ_ONLY_COMMANDS);

/** git's global options a read-only command may carry (no -C, --git-dir, --work-tree, -c…). */
const GIT_GLOBAL = new Set(['--no-pager', '-P', '--no-optional-locks']);

/**
 * Whether `command` is one of `names` used read-only: its arguments fit the grammar and every
 * path it reads passes `checks`; a git command also needs `repositoryTop` (null when the
 * workspace is the top of the repository git will use: `rev:path`, `git log -p` and `git diff`
 * name the repository's files, so a repository above the workspace reaches beyond it).
 * Returns null when allowed, else the reason. In two steps, cheapest first, so that a refusal
 * costs no more system calls than it must: `readOnlyWrittenProblem` (the grammar and every
 * path as written, no filesystem), then, once that passed, `readOnlyResolvedProblem` (the
 * repository, then the paths resolved). A caller may run the first step for every command of
 * a line before the second for any (evaluate.ts).
 */
export function readOnlyProblem(names: ReadonlySet<string>, command: PlainCommand, checks: PathChecks & RepositoryCheck): string | null {
  return readOnlyWrittenProblem(names, command, checks) ?? readOnlyResolvedProblem(command, checks);
}

/** Whether git would use a repository above the workspace: the reason, or null (readOnlyProblem). */
export interface RepositoryCheck {
  repositoryTop(): string | null;
}

/** The first step of readOnlyProblem: the command, its grammar and every path as written (`checks.written`). */
export function readOnlyWrittenProblem(names: ReadonlySet<string>, command: PlainCommand, checks: PathChecks): string | null {
  const { argv, patterns } = command;
  const form = formOf(argv);
  if (typeof form === 'string') return form;
  if (!names.has(form.key)) return `${JSON.stringify(form.key)} is not a read-only command of this rule`;
  for (const k of patterns) if (k >= form.first) return `the file-name pattern ${JSON.stringify(argv[k])}`;
  return argumentsProblem(READ_ONLY_COMMANDS[form.key]!, argv, form.first, checks, 'written');
}

/** The second step, only for a command readOnlyWrittenProblem allowed: git's repository, then every path resolved (`checks.resolved`). */
export function readOnlyResolvedProblem(command: PlainCommand, checks: PathChecks & RepositoryCheck): string | null {
  const { argv } = command;
  const form = formOf(argv) as Form;
  if (argv[0] === 'git') {
    const outside = checks.repositoryTop();
    if (outside) return outside;
  }
  return argumentsProblem(READ_ONLY_COMMANDS[form.key]!, argv, form.first, checks, 'resolved');
}

/** Which read-only command argv runs (`cat`, `git diff`) and where its arguments start. */
interface Form {
  readonly key: string;
  readonly first: number;
}

/** The command's form, or why it has none. */
function formOf(argv: readonly string[]): Form | string {
  const program = argv[0]!;
  // A command name is one word: `git\ status` runs a program named "git status", not git.
  if (program.includes(' ')) return `the command name ${JSON.stringify(program)}`;
  if (program !== 'git') return { key: program, first: 1 };
  let first = 1;
  while (first < argv.length && GIT_GLOBAL.has(argv[first]!)) first++;
  const sub = argv[first];
  if (sub === undefined) return 'git without a subcommand';
  if (sub.startsWith('-')) return `git option ${JSON.stringify(sub)} is not known to be read-only`;
  return { key: `git ${sub}`, first: first + 1 };
}

/** The arguments `args[first…]` against the grammar (no copy of the list). */
function argumentsProblem(g: Grammar, args: readonly string[], first: number, checks: PathChecks, step: Step): string | null {
  let options = true;
  for (let i = first; i < args.length; i++) {
    const a = args[i]!;
    if (!options || a === '-' || !a.startsWith('-') || g.positional === 'text') {
      const problem = positionalProblem(g.positional, a, checks, step);
      if (problem) return problem;
      continue;
    }
    if (a === '--') {
      options = false;
      continue;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = eq === -1 ? a : a.slice(0, eq);
      const attached = eq === -1 ? undefined : a.slice(eq + 1);
      const kind = g.long[name];
      if (!kind) return `the option ${JSON.stringify(name)} is not known to be read-only`;
      if (kind === 'flag' && attached !== undefined) return `the option ${JSON.stringify(name)} takes no value`;
      // `%G?`, `%GG`, `%GS`…: git verifies each signed commit by running gpg (gpg.program), not a read.
      if ((name === '--format' || name === '--pretty') && attached?.includes('%G')) return `the format ${JSON.stringify(attached)} verifies signatures (git runs gpg)`;
      if (kind === 'flag' || kind === 'optional') continue;
      if (kind === 'text' && attached === undefined) return `write the value of ${JSON.stringify(name)} as ${name}=…`;
      const value = attached ?? args[++i];
      const problem = valueProblem(kind, name, value, checks, step);
      if (problem) return problem;
      continue;
    }
    if (g.numericShort && /^-\d+$/.test(a)) continue;
    for (let j = 1; j < a.length; j++) {
      const c = a[j]!;
      const kind = g.short[c];
      if (!kind) return `the option ${JSON.stringify(`-${c}`)} is not known to be read-only`;
      if (kind === 'flag') continue;
      if (kind === 'optional') break;
      const rest = a.slice(j + 1);
      const value = rest !== '' ? rest : args[++i];
      const problem = valueProblem(kind, `-${c}`, value, checks, step);
      if (problem) return problem;
      break;
    }
  }
  return null;
}

function valueProblem(kind: ValueKind, name: string, value: string | undefined, checks: PathChecks, step: Step): string | null {
  if (value === undefined) return `the option ${JSON.stringify(name)} has no value`;
  if (kind === 'number' && !NUMBER.test(value)) return `the option ${JSON.stringify(name)} takes a number`;
  if (kind === 'path') {
    const problem = checkPath(checks, step, value);
    return problem ? `${name}: ${problem}` : null;
  }
  return null;
}

function positionalProblem(kind: PositionalKind, word: string, checks: PathChecks, step: Step): string | null {
  if (kind === 'text') return null;
  if (kind === 'none') return `the argument ${JSON.stringify(word)} (this command is read-only only without arguments)`;
  if (kind instanceof RegExp) return kind.test(word) ? null : `the argument ${JSON.stringify(word)}`;
  if (word === '-' && kind === 'path') return null;
  const problem = checkPath(checks, step, word);
  if (problem) return problem;
  if (kind === 'git') {
    // `rev:path` names a file of the repository (`HEAD:.legion/x`, `HEAD:../outside`), and so do
    // the index forms `:path` and `:<stage>:path` (`:0:private/x`).
    const index = /^:[0-3]:/.exec(word);
    const colon = index ? index[0].length - 1 : word.indexOf(':');
    if (colon !== -1 && colon + 1 < word.length) return checkPath(checks, step, word.slice(colon + 1).replace(/^\//, ''));
  }
  return null;
}
