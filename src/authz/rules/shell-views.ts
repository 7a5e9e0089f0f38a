import { splitShell, type ShellCommand } from './shell-split';
import { refusedLinesForDeny } from './shell-refused';
import { pipeToShellViews } from './shell-pipe';
import { SHELLS, basename, isPrefix } from './shell-words';

/**
 * The texts deny and ask rules are checked against for one simple command, so that a
 * deny for `rm -rf /` also catches `\rm -rf /`, `"rm" -rf /`, `/bin/rm -rf /`,
 * `sudo rm -rf /`, `env X=1 rm -rf /`, `then rm -rf /`, `sh -c 'rm -rf /'` and
 * `eval "rm -rf /"`:
 *   - the command's text as written (what allow rules see),
 *   - its words with quotes and escapes removed,
 *   - the same with each `${x:-word}` (`-`, `=`, `+`, `?`, with or without `:`) replaced by its
 *     word, so `rm -rf ${x:-/}` reads `rm -rf /`,
 *   - without its redirections (`>out curl …` is `curl …`),
 *   - with absolute paths normalized (`/usr/../*` and `/???` read `/*`, `//./` reads `/`),
 *   - with a path-qualified command name reduced to its basename,
 *   - after a prefix (assignment `X=1`, keyword `if`/`then`/`do`/`!`…, or a wrapper such
 *     as `env`, `sudo`, `xargs`, `timeout`, `find`), every suffix of its words (up to 24),
 *   - the substitutions in a quoted subscript or compound assignment a builtin evaluates
 *     (`printf -v 'a[$(cmd)]'`, `declare -a 'a=($(cmd))'`),
 *   - for `sh|bash|… -c <script>`, `su -c <script>`, `eval <args>`, `trap [--] <script> …`,
 *     `alias name=<script>` and a shell
 *     reading its script from a here-string or here-document (`bash <<<'…'`), the views of every
 *     command in the script, recursively (the first such script, 4 levels deep). A script that
 *     cannot be split, or nests deeper, is reported in `opaque`: the caller then asks,
 *   - for such a script that pipes a download into a shell, `<download> | <shell>` (shell-pipe.ts).
 * Allow rules never see these views: a wrapped command never inherits an allow.
 */
export function strictViews(command: ShellCommand, depth = 0, opaque?: string[]): string[] {
  // Few and short: a list searched is cheaper than a set (no hash of each new string).
  const views = new Views(command.text);
  addStrictViews(views, command, depth, opaque);
  return views.list;
}

/** strictViews of `command` added to `views` (a line's views gather every command's in one list, no list per command). */
export function addStrictViews(views: Views, command: ShellCommand, depth = 0, opaque?: string[]): void {
  views.add(command.text);
  if (command.kind === 'compound') return;
  const wordLists: (readonly string[])[] = [command.words];
  // Each check below runs only on a word list holding the characters it needs (most hold none).
  const flags = wordFlags(command.words);
  if (flags & DOLLAR_BRACE) {
    const defaulted = command.words.map((w) => withExpansionDefaults(w) ?? w);
    if (defaulted.some((w, i) => w !== command.words[i])) wordLists.push(defaulted);
  }
  // The words without redirections, as bash runs them: `>out curl …` and `<<<x curl …` are `curl …`.
  if (flags & MAY_REDIRECT && command.words.some(isRedirection)) wordLists.push(withoutRedirections(command.words));
  // A pattern's dot-named component as the name bash may expand it to: `.le*` is `.legion`, `.en?` is `.env`.
  for (let i = 0, n = wordLists.length; i < n; i++) {
    const list = wordLists[i]!;
    if ((i === 0 ? flags : wordFlags(list)) & DOT_AND_PATTERN && list.some(mayMatchDotName)) wordLists.push(list.map((w) => (mayMatchDotName(w) ? dotNamesOf(w) : w)));
  }
  // Absolute paths as the kernel and bash read them: `/usr/../*` is `/*`, `//./` is `/`, `/???` every top folder.
  for (let i = 0, n = wordLists.length; i < n; i++) {
    const list = wordLists[i]!;
    if (!((i === 0 ? flags : wordFlags(list)) & SLASH_FIRST) || !list.some(mayNormalize)) continue;
    const normalized = list.map((w) => (mayNormalize(w) ? normalizedAbsolute(w) : w));
    if (normalized.some((w, j) => w !== list[j])) wordLists.push(normalized);
  }
  // Quoted text bash evaluates anyway: a subscript wherever a builtin takes a variable name or
  // evaluates arithmetic (`printf -v 'a[$(cmd)]'`, `test -v`, `unset`, `let`, `[[ x -eq 1 ]]`
  // through a variable holding it) and a compound assignment given as one word
  // (`declare -a 'a=($(cmd))'`): the substitutions in such a word are read as commands. Looked
  // for only in a command whose text holds a `[` or `(` (most hold neither).
  if (depth < MAX_SCRIPT_DEPTH && (command.text.includes('[') || command.text.includes('('))) {
    for (const word of command.words) {
      const start = evaluatedSubstitution(word);
      if (start === -1) continue;
      for (const inner of splitShell(word.slice(start)).commands) addStrictViews(views, inner, depth + 1, []);
    }
  }
  let scripts: Set<string> | null = null;
  for (const words of wordLists) {
    // Most commands' words joined are their text as written (added above): no second copy to compare.
    if (words !== command.words || !joinsAs(words, command.text)) views.add(words.join(' '));
    const first = words[0] ?? '';
    const base = basename(first);
    if (base !== first) views.add([base, ...words.slice(1)].join(' '));
    if (isPrefix(first) || (base !== first && isPrefix(base))) {
      for (let k = 1; k < Math.min(words.length, MAX_PREFIX_WORDS + 1); k++) {
        const rest = words.slice(k);
        views.add(rest.join(' '));
        const restBase = basename(rest[0]!);
        if (restBase !== rest[0]) views.add([restBase, ...rest.slice(1)].join(' '));
      }
    }
    // `eval echo ${v:-\<(cmd)}` runs `echo <(cmd)`: scripts are read from the defaulted words too.
    const script = embeddedScript(words);
    if (script !== null && !scripts?.has(script)) {
      (scripts ??= new Set()).add(script);
      views.add(script);
      if (depth >= MAX_SCRIPT_DEPTH) {
        opaque?.push(`scripts nested deeper than ${MAX_SCRIPT_DEPTH} levels`);
        continue;
      }
      const split = splitShell(script);
      if (!split.ok) opaque?.push(`the script ${JSON.stringify(script.length > 40 ? `${script.slice(0, 39)}…` : script)}: ${split.error}`);
      for (const inner of split.commands) addStrictViews(views, inner, depth + 1, opaque);
      for (const view of pipeToShellViews(script, split.commands)) views.add(view);
      // A script the splitter refuses (`bash <<A` holding `bash <<B …`, a comment): its commands seen as at the top (shell-refused.ts).
      if (!split.ok) for (const rewritten of refusedLinesForDeny(script)) for (const inner of splitShell(rewritten).commands) addStrictViews(views, inner, depth + 1, []);
    }
  }
}

/**
 * Whether addStrictViews of a plain command's argv (its words joined by spaces as its text)
 * adds nothing that addStrictViews of `command`, the same command as the splitter reports it
 * (its redirections among its words), did not: argv is `command`'s words without redirections,
 * none of its words makes a word list of its own (an expansion, a word that reads as a
 * redirection), and it joins as written (no word empty or holding whitespace). Then its word
 * lists are among `command`'s and its text is one of their joins. Property-tested.
 */
export function argvViewsCovered(command: ShellCommand, argv: readonly string[]): boolean {
  for (const word of argv) if (word === '' || hasExpansion(word) || isRedirection(word) || /\s/.test(word)) return false;
  const words = withoutRedirections(command.words);
  if (words.length !== argv.length) return false;
  for (let i = 0; i < words.length; i++) if (words[i] !== argv[i]) return false;
  return true;
}

/** Whether `words.join(' ')` is `text`, without making the joined string. */
export function joinsAs(words: readonly string[], text: string): boolean {
  let at = 0;
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (i > 0) {
      if (text.charCodeAt(at) !== 0x20) return false;
      at++;
    }
    // By character codes: `startsWith` at an offset of a sliced string (a line's command text) was the costliest step here.
    if (at + word.length > text.length) return false;
    for (let j = 0; j < word.length; j++) if (word.charCodeAt(j) !== text.charCodeAt(at + j)) return false;
    at += word.length;
  }
  return at === text.length;
}

/**
 * Distinct strings in the order first added. Searched as a list while short (no hash of each
 * new string), through a set beyond that (a hostile line's many views stay linear).
 */
export class Views {
  readonly list: string[];
  private set: Set<string> | null = null;
  constructor(first: string) {
    this.list = [first];
  }
  add(view: string): void {
    if (this.set) {
      if (this.set.has(view)) return;
      this.set.add(view);
    } else {
      if (this.list.includes(view)) return;
      if (this.list.length >= LIST_LIMIT) this.set = new Set([...this.list, view]);
    }
    this.list.push(view);
  }
}
const LIST_LIMIT = 16;

/**
 * Bounds that keep the work per command linear in its length: wrapper chains longer than
 * this many words, or scripts nested deeper, are not looked into (deeper scripts are
 * reported as opaque, so the command asks).
 */
const MAX_PREFIX_WORDS = 24;
const MAX_SCRIPT_DEPTH = 4;

/** The script a command would run, or null: the argument of `-c` for shells (also `-ec`, `-lc`…), the rest of `eval`, a trap's action, an alias's values. */
export function embeddedScript(words: readonly string[]): string | null {
  const limit = Math.min(words.length, MAX_PREFIX_WORDS + 1);
  for (let k = 0; k < limit; k++) {
    // Every name looked for is short: a longer one (most paths and options) is not hashed for the set.
    const name = shortBasename(words[k]!);
    // Most words are no runner's name: told by their first character and length, without hashing them for the sets below.
    if (name === null || !maybeRunner(name)) continue;
    if (name === 'eval' && k + 1 < words.length) return words.slice(k + 1).join(' ');
    if (name === 'trap') {
      // `trap -- 'cmd' INT`: the action follows the end of options.
      const action = words[k + 1] === '--' ? k + 2 : k + 1;
      if (action < words.length) return words[action]!;
    }
    // `alias c='curl …'`: each value is a script (run where the alias is used, expand_aliases on).
    if (name === 'alias' && k + 1 < words.length) {
      const values = words.slice(k + 1).filter((w) => w.includes('=')).map((w) => w.slice(w.indexOf('=') + 1));
      if (values.length > 0) return values.join('\n');
    }
    // `. /dev/stdin <<EOF`, `sudo -s <<EOF`: the here-string is the script; else a command follows (its own k).
    if ((name === 'source' || name === '.') && STDIN_FILES.has(words[k + 1] ?? '')) return stdinScript(words, k + 2, limit, true);
    if (name === 'sudo' || name === 'doas') {
      const script = userShellScript(words, k + 1, limit, SUDO_OPTION_ARGS, /^-[A-Za-z]*[si][A-Za-z]*$|^--(shell|login)$/);
      if (script !== null) return script;
      continue;
    }
    if (!SHELLS.has(name)) continue;
    for (let j = k + 1; j < limit; j++) {
      const w = words[j]!;
      if (/^-[A-Za-z]*c[A-Za-z]*$/.test(w) || w === '--command') return j + 1 < words.length ? words[j + 1]! : null;
    }
    if (STDIN_SHELLS.has(name)) return stdinScript(words, k + 1, limit);
    // su and runuser take a user, not a script: the shell they start reads stdin.
    if (name === 'su' || name === 'runuser') {
      const script = userShellScript(words, k + 1, limit, SU_OPTION_ARGS, null);
      if (script !== null) return script;
    }
  }
  return null;
}

/** Shells that read their script from standard input when given no script operand. */
const STDIN_SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'ash', 'mksh', 'fish', 'csh', 'tcsh']);

/**
 * The here-string a shell without a script operand reads as its script (`bash <<<'curl …'`,
 * `sh -s <<EOF` once shell-heredoc.ts made the here-document one), or null. Options are
 * skipped (`-o`/`-O`/`+o`/`+O`, `--rcfile`, `--init-file` with their argument); after `-s` the
 * operands are the script's arguments; otherwise a first operand is the script file, so the
 * here-string is that script's input: data, as for any other command — unless that file is
 * standard input itself (`/dev/stdin`). Stdin is the here-string written `<<<` or `0<<<`.
 */
function stdinScript(words: readonly string[], from: number, limit: number, operandsAreArguments = false): string | null {
  let script: string | null = null;
  let options = true;
  let args = operandsAreArguments;
  let fromStdin = true;
  for (let j = from; j < limit; j++) {
    const w = words[j]!;
    const stdin = STDIN_HERE_STRING.exec(w);
    if (stdin) script = w.slice(stdin[0].length);
    else if (isRedirection(w)) continue;
    else if (options && w === '--') options = false;
    else if (options && SHELL_OPTION_ARGS.has(w)) j++;
    else if (options && /^-[A-Za-z]*s[A-Za-z]*$/.test(w)) args = true;
    else if (options && /^[-+]/.test(w)) continue;
    else {
      options = false;
      if (!args && !STDIN_FILES.has(w)) fromStdin = false;
      args = true;
    }
  }
  return fromStdin ? script : null;
}

/**
 * For `su`/`runuser` (operands are a user and the shell's arguments) and `sudo -s`/`-i`: the
 * here-string the shell they start reads as its script, or null (a command follows, which
 * embeddedScript looks into by itself). `shellFlag` null: the command always starts a shell.
 */
function userShellScript(words: readonly string[], from: number, limit: number, optionArgs: ReadonlySet<string>, shellFlag: RegExp | null): string | null {
  let script: string | null = null;
  let shell = shellFlag === null;
  for (let j = from; j < limit; j++) {
    const w = words[j]!;
    const stdin = STDIN_HERE_STRING.exec(w);
    if (stdin) script = w.slice(stdin[0].length);
    else if (isRedirection(w)) continue;
    else if (w === '--') return words.slice(j + 1, limit).every(isRedirection) && shell ? hereString(words, j + 1, limit) ?? script : null;
    else if (optionArgs.has(w)) j++;
    else if (shellFlag?.test(w)) shell = true;
    else if (w.startsWith('-')) continue;
    else if (shellFlag !== null) return null; // sudo: a command
  }
  return shell ? script : null;
}

/** The last standard-input here-string among words[from..limit), or null. */
function hereString(words: readonly string[], from: number, limit: number): string | null {
  let script: string | null = null;
  for (let j = from; j < limit; j++) {
    const stdin = STDIN_HERE_STRING.exec(words[j]!);
    if (stdin) script = words[j]!.slice(stdin[0].length);
  }
  return script;
}

/**
 * Where the substitutions start in a word bash may evaluate as code although it was quoted: the
 * first `$(` or backquote after a `[` (a subscript) or a `=(` (a compound assignment), or -1.
 */
function evaluatedSubstitution(word: string): number {
  const dollar = word.indexOf('$(');
  const tick = word.indexOf('`');
  const start = dollar === -1 ? tick : tick === -1 ? dollar : Math.min(dollar, tick);
  if (start <= 0) return -1;
  const before = word.slice(0, start);
  return before.includes('[') || before.includes('=(') ? start : -1;
}

/**
 * basename(word) when it is at most LONGEST_SCRIPT_RUNNER characters long, else null, reading
 * only the word's end: a longer word's basename is longer unless a `/` (not its last
 * character) stands within its last LONGEST_SCRIPT_RUNNER + 1 characters.
 */
export function shortBasename(word: string): string | null {
  if (word.length <= LONGEST_SCRIPT_RUNNER) return basename(word);
  const last = word.length - 1;
  if (word.charCodeAt(last) === 0x2f) return null; // basename of `a/b/` is the word itself
  for (let i = last - 1; i >= last - LONGEST_SCRIPT_RUNNER; i--) if (word.charCodeAt(i) === 0x2f) return word.slice(i + 1);
  return null;
}

/** The names embeddedScript looks for: `eval`, `trap`, `alias`, `source`, `.`, `sudo`, `doas` and SHELLS. */
const RUNNERS = ['eval', 'trap', 'alias', 'source', '.', 'sudo', 'doas', ...SHELLS];
/** The longest of RUNNERS. */
export const LONGEST_SCRIPT_RUNNER = Math.max(...RUNNERS.map((name) => name.length));
/** Per first character code (ASCII) and length (up to LONGEST_SCRIPT_RUNNER): 1 when a name of RUNNERS has both. */
const RUNNER_STARTS = new Uint8Array(128 * (LONGEST_SCRIPT_RUNNER + 1));
for (const name of RUNNERS) RUNNER_STARTS[name.charCodeAt(0) * (LONGEST_SCRIPT_RUNNER + 1) + name.length] = 1;

/** Whether `name` (at most LONGEST_SCRIPT_RUNNER long) may be one of RUNNERS: false only when no runner has its first character and length. */
function maybeRunner(name: string): boolean {
  const c = name.charCodeAt(0);
  return c < 128 && RUNNER_STARTS[c * (LONGEST_SCRIPT_RUNNER + 1) + name.length] === 1;
}
/** Standard input as a here-string (`<<<x`, `0<<<x`); another descriptor's (`3<<<x`) is not. */
const STDIN_HERE_STRING = /^0*<<</;
/** Script operands that name standard input. */
const STDIN_FILES = new Set(['/dev/stdin', '/dev/fd/0', '/proc/self/fd/0']);
/** Shell options that take the next word as their argument. */
const SHELL_OPTION_ARGS = new Set(['-o', '-O', '+o', '+O', '--rcfile', '--init-file']);
const SU_OPTION_ARGS = new Set(['-s', '--shell', '-g', '--group', '-G', '--supp-group', '-u', '--user', '-w', '--whitelist-environment']);
const SUDO_OPTION_ARGS = new Set(['-u', '--user', '-g', '--group', '-C', '--close-from', '-D', '--chdir', '-h', '--host', '-p', '--prompt', '-r', '--role', '-t', '--type', '-U', '--other-user', '-T', '--command-timeout', '-R', '--chroot']);

/**
 * A word the splitter wrote for a redirection (`>out`, `2>&1`, `<<<x`, `&>>log`); not a process
 * substitution `<(…)`. A quoted word reading the same is taken for one too: deny rules then see
 * one view more, never fewer.
 */
const REDIRECTION = /^\d*(?:&>>?|<<<|<>|<&|>&|>>|>\||<|>)(?!\()/;
/** REDIRECTION, run only on a word whose first character after any digits is `&`, `<` or `>` (most words are not). */
function isRedirection(word: string): boolean {
  let i = 0;
  while (i < word.length && word.charCodeAt(i) >= 0x30 && word.charCodeAt(i) <= 0x39) i++;
  const c = word[i];
  return (c === '&' || c === '<' || c === '>') && REDIRECTION.test(word);
}

const hasExpansion = (word: string): boolean => word.includes('${');

/** wordFlags' bits: a word holds `${`; a word's first character after any digits is `&`, `<` or `>`; a word holds `.` and one of `*?[`; a word starts with `/`. */
const DOLLAR_BRACE = 1;
const MAY_REDIRECT = 2;
const DOT_AND_PATTERN = 4;
const SLASH_FIRST = 8;

/**
 * Which characters addStrictViews' word checks need the words hold, in one pass over their
 * characters (no call per check and word): a bit clear means that check is false for every
 * word (hasExpansion, isRedirection, mayMatchDotName, mayNormalize each need theirs).
 */
export function wordFlags(words: readonly string[]): number {
  let flags = 0;
  for (let k = 0; k < words.length; k++) {
    const word = words[k]!;
    const n = word.length;
    let i = 0;
    while (i < n && word.charCodeAt(i) >= 0x30 && word.charCodeAt(i) <= 0x39) i++;
    const first = word.charCodeAt(i);
    if (first === 0x26 || first === 0x3c || first === 0x3e) flags |= MAY_REDIRECT; // & < >
    if (word.charCodeAt(0) === 0x2f) flags |= SLASH_FIRST;
    let dot = false;
    let pattern = false;
    for (let j = 0; j < n; j++) {
      const c = word.charCodeAt(j);
      if (c === 0x24) {
        if (word.charCodeAt(j + 1) === 0x7b) flags |= DOLLAR_BRACE; // ${
      } else if (c === 0x2e) dot = true;
      else if (c === 0x2a || c === 0x3f || c === 0x5b) pattern = true; // * ? [
    }
    if (dot && pattern) flags |= DOT_AND_PATTERN;
  }
  return flags;
}

/**
 * Dot-names deny and ask rules watch for (Legion's state; the shipped secret names, rules.yaml's
 * shell-mentions-secrets): a file-name pattern that may expand to one is seen as it, since bash
 * hands the program the name the rule would have matched (`cat .le*\/web-token`).
 */
const DOT_NAMES = ['.legion', '.env', '.envrc', '.ssh', '.aws', '.gnupg', '.netrc', '.git-credentials', '.npmrc', '.pypirc'];

/** A word with a path component that starts with a literal `.` and holds a pattern (bash's `*` and `?` match no leading dot). */
function mayMatchDotName(word: string): boolean {
  return word.includes('.') && /(?:^|\/)\.[^/]*[*?[]/.test(word);
}

/** `word` with each such component replaced by the first of DOT_NAMES it matches (case aside: erring towards seeing it). */
function dotNamesOf(word: string): string {
  return word.split('/').map((part) => {
    if (part.length < 2 || part[0] !== '.' || !/[*?[]/.test(part)) return part;
    const pattern = patternRegExp(part);
    return DOT_NAMES.find((name) => pattern.test(name)) ?? part;
  }).join('/');
}

/** One path component's bash pattern (`*`, `?`, `[…]` with `!` or `^`, `\x`) as a whole-name RegExp. */
function patternRegExp(part: string): RegExp {
  let source = '';
  for (let i = 0; i < part.length; i++) {
    const c = part[i]!;
    if (c === '*') source += '.*';
    else if (c === '?') source += '.';
    else if (c === '\\' && i + 1 < part.length) source += escapeRegExp(part[++i]!);
    else if (c === '[') {
      let j = i + 1;
      if (part[j] === '!' || part[j] === '^') j++;
      if (part[j] === ']') j++;
      while (j < part.length && part[j] !== ']') j++;
      if (j >= part.length) {
        source += '\\[';
        continue;
      }
      let body = part.slice(i + 1, j);
      const negated = body[0] === '!' || body[0] === '^';
      if (negated) body = body.slice(1);
      source += `[${negated ? '^' : ''}${body.replace(/[\\\]^]/g, (m) => `\\${m}`)}]`;
      i = j;
    } else source += escapeRegExp(c);
  }
  try {
    return new RegExp(`^${source}$`, 'i');
  } catch {
    return /(?!)/; // a range bash cannot read either (`[z-a]`): it matches nothing
  }
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** An absolute path that `..`, `.`, a repeated `/` or a file-name pattern may make read otherwise. */
function mayNormalize(word: string): boolean {
  return word.charCodeAt(0) === 0x2f && (word.includes('/.') || word.includes('//') || /^\/[^/]*[*?[]/.test(word));
}

/** Each word check addStrictViews guards with a bit of wordFlags, with its bit (a test checks the bit is set wherever the check holds). */
export const FLAGGED_WORD_CHECKS: readonly (readonly [number, (word: string) => boolean])[] = [
  [DOLLAR_BRACE, hasExpansion],
  [MAY_REDIRECT, isRedirection],
  [DOT_AND_PATTERN, mayMatchDotName],
  [SLASH_FIRST, mayNormalize],
];

/**
 * An absolute path with `.` and `..` components and repeated slashes resolved lexically (`..` of
 * `/` is `/`), and a first component that is a file-name pattern, when it is the last
 * (`/*\/`, `/[a-z]*`, `/???`: some or all of the top folders), written `/*`; a trailing `/` kept.
 */
export function normalizedAbsolute(word: string): string {
  const parts: string[] = [];
  for (const part of word.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') parts.pop();
    else parts.push(part);
  }
  if (parts.length === 1 && /[*?[]/.test(parts[0]!)) return '/*';
  const path = `/${parts.join('/')}`;
  return parts.length > 0 && word.endsWith('/') ? `${path}/` : path;
}

/** A `{name}` word the splitter cut from a redirection that allocates a descriptor (`{fd}>out`). */
const FD_VARIABLE = /^\{[A-Za-z_][A-Za-z0-9_]*\}$/;

/** The words without redirections, nor the `{fd}` before one: `{fd}>out curl …` runs `curl …`. */
function withoutRedirections(words: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    // `{` first: the regex runs only on a word that can match it.
    if (!isRedirection(w) && !(w.charCodeAt(0) === 0x7b && FD_VARIABLE.test(w) && isRedirection(words[i + 1] ?? ''))) out.push(w);
  }
  return out;
}

export const EXPANSION_WITH_WORD = /\$\{[A-Za-z_][A-Za-z0-9_]*:?[-=+?]([^{}]*)\}/g;

/**
 * `text` with every `${name:-word}`-style expansion replaced by its word (quotes around the
 * word and backslashes removed, as bash does), innermost first; null when there is none. Deny rules see what the line
 * would run when the variable is unset (or set, for `+`).
 */
export function withExpansionDefaults(text: string): string | null {
  if (!text.includes('${')) return null;
  let out = text;
  for (let round = 0; round < 8; round++) {
    const next = replaceExpansionsWithWords(out);
    if (next === out) break;
    out = next;
    // No `${` left: no further round can replace anything.
    if (!out.includes('${')) break;
  }
  return out === text ? null : out;
}

/**
 * `text.replace(EXPANSION_WITH_WORD, defaultWord)` without the regex and its callback (a call
 * into the runtime per match): the same leftmost, non-overlapping matches — `${`, a name, an
 * optional `:`, one of `-=+?`, then a word without braces up to the first `}`. A test compares
 * it with the regex on generated text.
 */
export function replaceExpansionsWithWords(text: string): string {
  let out = '';
  let from = 0;
  let at = text.indexOf('${');
  while (at !== -1) {
    const end = expansionWithWordEnd(text, at);
    if (end === -1) {
      at = text.indexOf('${', at + 1);
      continue;
    }
    const operator = text.charCodeAt(at + 2 + nameLength(text, at + 2)) === 0x3a ? 1 : 0; // `:`
    const wordStart = at + 2 + nameLength(text, at + 2) + operator + 1;
    out += text.slice(from, at) + defaultWord('', text.slice(wordStart, end));
    from = end + 1;
    at = text.indexOf('${', from);
  }
  return from === 0 ? text : out + text.slice(from);
}

/** The length of the shell name (`[A-Za-z_][A-Za-z0-9_]*`) at `at`, 0 when there is none. */
function nameLength(text: string, at: number): number {
  let i = at;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const letter = (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c === 0x5f;
    if (!letter && !(i > at && c >= 0x30 && c <= 0x39)) break;
  }
  return i - at;
}

/** Where the `}` of a `${name:-word}` starting at `at` (its `$`) stands, or -1 when none starts there. */
function expansionWithWordEnd(text: string, at: number): number {
  const name = nameLength(text, at + 2);
  if (name === 0) return -1;
  let i = at + 2 + name;
  if (text.charCodeAt(i) === 0x3a) i++;
  const op = text.charCodeAt(i);
  if (op !== 0x2d && op !== 0x3d && op !== 0x2b && op !== 0x3f) return -1; // - = + ?
  for (i++; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7d) return i; // }
    if (c === 0x7b) return -1; // {
  }
  return -1;
}

/** The word of one `${name:-word}` as bash uses it: quotes around it and backslashes removed (each step only where there is one). */
export function defaultWord(_: string, word: string): string {
  const first = word[0];
  const unquoted = first === "'" || first === '"' ? word.replace(/^(['"])(.*)\1$/s, '$2') : word;
  return unquoted.includes('\\') ? unquoted.replace(/\\(.)/gs, '$1') : unquoted;
}
