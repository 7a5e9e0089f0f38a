import { splitShell, type ShellCommand } from './shell-split';
import { addStrictViews, embeddedScript, normalizedAbsolute, Views } from './shell-views';
import { ASSIGNMENT, basename, isPrefix, KEYWORDS } from './shell-words';

/**
 * Deny views of a line with the path arguments of the commands the shipped denies of `/` target
 * (rm, find, chmod, chown, chgrp) resolved as bash would (docs/shell-rules.md#deny-and-ask-rules):
 * relative to the shell's working folder — the workspace root, then each literal `cd`/`pushd`
 * earlier in the line (`cd -` its previous folder) — `~` and `~/…` as the user's home,
 * `/proc/self/root` and `/proc/<n>/root` as `/`; then normalized (`/ws/../../*` reads `/*`).
 * A path under the home folder is also written `~/…` (the denies of the home folder).
 * `rm -rf ../../../*`, `cd / && rm -rf *` and `find ~/../.. -delete` then meet the denies of `/`.
 * A `cd` whose target is not literal (`cd "$D"`, `popd`, `cd` without a known home) makes the
 * folder unknown: such a command's relative path is then reported in `unknown` (the caller asks).
 * Scripts (`bash -c '…'`, `eval …`) start in the folder of the command that runs them.
 */
export interface ResolvedViews {
  readonly viewList: readonly string[];
  readonly lowerViews: readonly string[];
  /** Why a targeted command's path cannot be placed, or null. */
  readonly unknown: string | null;
}

/** Whether a line may hold a command resolvedViews rewrites: a test on its text, made once per line. */
export function mayTargetPaths(command: string): boolean {
  return TARGET_TEXT.test(command);
}

export function resolvedViews(commands: readonly ShellCommand[], workspaceRoot: string, homeDir: string | null, line: string): ResolvedViews {
  // A line that sets HOME (`HOME=/ ; rm -rf ~/*`, `export HOME=…`) makes `~` unknown: not resolved.
  const known = homeDir !== null && homeDir.startsWith('/') ? normalizedAbsolute(homeDir) : null;
  const home = line.includes('HOME') ? null : known;
  // `$HOME` and `${HOME}` are read as the user's home all the same: a view only adds denies, and a
  // line that set HOME elsewhere (`HOME=/x; rm -rf $HOME/.`) is a recursive delete of a home anyway.
  const state: Walk = { home, homeVar: known, cdPath: line.includes('CDPATH'), views: null, unknown: null };
  walk(commands, { cwds: [normalizedAbsolute(workspaceRoot)], previous: null }, state, 0);
  const viewList = state.views?.list ?? [];
  return { viewList, lowerViews: viewList.map((v) => v.toLowerCase()), unknown: state.unknown };
}

/**
 * The folders a command may run in, or null when unknown. A `cd` may fail (`cd /no/such; rm -rf
 * ../../*` runs in the folder before it), so each keeps the folders before it; beyond
 * MAX_FOLDERS the folder is unknown.
 */
interface Folder {
  cwds: readonly string[] | null;
  previous: readonly string[] | null;
}
const MAX_FOLDERS = 8;
interface Walk {
  readonly home: string | null;
  /** What `$HOME` / `${HOME}` at the start of a path word is read as (the user's home, even in a line mentioning HOME). */
  readonly homeVar: string | null;
  /** The line sets CDPATH: `cd name` may go anywhere (a target beginning `/`, `.` or `~` does not look it up). */
  readonly cdPath: boolean;
  views: Views | null;
  unknown: string | null;
}

/** Prefixes after which `cd` still runs in this shell. */
const SAME_SHELL = new Set(['builtin', 'command', 'time', '-p']);
const TARGETS = new Set(['rm', 'find', 'chmod', 'chown', 'chgrp']);
const TARGET_TEXT = /\b(rm|find|chmod|chown|chgrp)\b/;
/** `$HOME` or `${HOME}` as the whole word or its first component. */
const HOME_VAR = /^\$(?:HOME|\{HOME\})(?=\/|$)/;
const MAX_DEPTH = 4;
/** Shell syntax a literal path never holds: an expansion, a substitution, a pattern or a brace. */
const NOT_LITERAL = /[$`*?[{]/;
const PROC_ROOT = /^\/+proc\/+(self|thread-self|\d+)\/+root(?=\/|$)/;
const PROC_CWD = /^\/+proc\/+(self|thread-self)\/+cwd(?=\/|$)/;
/** find's options before its starting points. */
const FIND_OPTIONS = /^-([HLP]|D\S*|O\d*)$/;

function walk(commands: readonly ShellCommand[], folder: Folder, state: Walk, depth: number): void {
  for (const command of commands) {
    if (command.kind === 'compound') continue;
    const words = command.words;
    let k = 0;
    while (k < words.length && (KEYWORDS.has(words[k]!) || SAME_SHELL.has(words[k]!) || (words[k]!.indexOf('=') > 0 && ASSIGNMENT.test(words[k]!)))) k++;
    const name = words[k];
    if (name === 'cd' || name === 'pushd') changeFolder(words.slice(k + 1), folder, state);
    else if (name === 'popd') folder.cwds = null;
    else if (words.some((w) => TARGETS.has(basename(w)))) {
      if (folder.cwds === null) resolveCommand(command, null, state, depth);
      else for (const cwd of folder.cwds) resolveCommand(command, cwd, state, depth);
    }
    const script = depth < MAX_DEPTH ? embeddedScript(words) : null;
    // `eval` and `source` run in this shell (their `cd` moves the line); another script in a child shell.
    const here = name === 'eval' || name === 'source' || name === '.';
    if (script !== null) walk(splitShell(script).commands, here ? folder : { ...folder }, state, depth + 1);
  }
}

/** The folder after `cd [-L|-P|-e|-@] [--] [dir]`. */
function changeFolder(args: readonly string[], folder: Folder, state: Walk): void {
  const { home } = state;
  let i = 0;
  while (i < args.length && /^-[LPe@]+$/.test(args[i]!)) i++;
  if (args[i] === '--') i++;
  const target = args[i];
  const before = folder.cwds;
  // An unknown folder stays unknown: the `cd` may fail.
  if (before === null) return;
  let after: (string | null)[] | null;
  if (target === undefined) after = [home];
  else if (target === '-' && args[i - 1] !== '--') after = folder.previous === null ? null : [...folder.previous];
  else if (state.cdPath && !/^[/.~]/.test(target)) after = null;
  else after = before.map((cwd) => resolvedPath(target, cwd, home, state.homeVar));
  folder.previous = before;
  if (after === null || after.includes(null)) {
    folder.cwds = null;
    return;
  }
  const cwds = [...new Set([...(after as string[]), ...before])];
  folder.cwds = cwds.length > MAX_FOLDERS ? null : cwds;
}

/** An absolute, normalized path for a literal path word, or null when it cannot be known (not literal, unknown folder or home, `~user`). */
function resolvedPath(written: string, cwd: string | null, home: string | null, homeVar: string | null): string | null {
  const variable = HOME_VAR.exec(written);
  const word = variable && homeVar !== null ? `${homeVar}${written.slice(variable[0].length)}` : written;
  if (word === '' || NOT_LITERAL.test(word)) return null;
  let path: string | null;
  if (word === '~' || word.startsWith('~/')) path = home === null ? null : home + word.slice(1);
  else if (word.startsWith('~')) path = null;
  else if (word.startsWith('/')) path = word;
  else path = cwd === null ? null : `${cwd}/${word}`;
  return path === null ? null : normalizedAbsolute(withoutProcRoot(path, cwd));
}

/** `/proc/self/root/x` (also `/proc/<pid>/root`, repeated) read as `/x`, `/proc/self/cwd/x` as `<cwd>/x` (kept when the folder is unknown). */
function withoutProcRoot(path: string, cwd: string | null): string {
  let out = path;
  for (let i = 0; i < 8; i++) {
    const root = PROC_ROOT.exec(out);
    if (root) out = out.slice(root[0].length) || '/';
    else {
      const here = cwd === null ? null : PROC_CWD.exec(out);
      if (!here) break;
      out = `${cwd}/${out.slice(here[0].length)}`;
    }
  }
  return out;
}

/** Adds the views of `command` with its path words resolved; notes a relative path in an unknown folder. */
function resolveCommand(command: ShellCommand, cwd: string | null, state: Walk, depth: number): void {
  const { words } = command;
  const { home } = state;
  const resolved = words.slice();
  let changed = false;
  // `find` without a starting point starts at `.`: `cd / && find -delete` reads `find / -delete`.
  const find = words.findIndex((w, i) => basename(w) === 'find' && (i === 0 || isPrefix(words[i - 1]!)));
  if (find !== -1) {
    let at = find + 1;
    while (at < words.length && FIND_OPTIONS.test(words[at]!)) at++;
    if (at === words.length || (words[at]!.startsWith('-') && !FIND_OPTIONS.test(words[at]!)) || words[at] === '!' || words[at] === '(') {
      if (cwd === null) state.unknown ??= `cannot tell which folder \`${command.text}\` runs in (a \`cd\` before it has no literal target)`;
      else {
        resolved.splice(at, 0, cwd);
        changed = true;
      }
    }
  }
  for (let i = 1; i < resolved.length; i++) {
    let word = resolved[i]!;
    const variable = HOME_VAR.exec(word);
    if (variable && state.homeVar !== null && !/[$`]/.test(word.slice(variable[0].length))) {
      word = `${state.homeVar}${word.slice(variable[0].length)}`;
      resolved[i] = word;
      changed = true;
    }
    if (word.startsWith('-') || word.includes('$') || word.includes('`')) continue;
    const relative = !word.startsWith('/') && !word.startsWith('~');
    if (relative && cwd === null) {
      state.unknown ??= `cannot tell which folder \`${command.text}\` runs in (a \`cd\` before it has no literal target)`;
      continue;
    }
    // A pattern is resolved as a path (`cd / && rm -rf *` reads `rm -rf /*`), `~` only when home is known.
    let path: string | null;
    if (word === '~' || word.startsWith('~/')) path = home === null ? null : home + word.slice(1);
    else if (word.startsWith('~')) path = null;
    else path = word.startsWith('/') ? word : `${cwd}/${word}`;
    if (path === null) continue;
    const out = normalizedAbsolute(withoutProcRoot(path, cwd));
    if (out !== word) {
      resolved[i] = out;
      changed = true;
    }
  }
  // A resolved path under the user's real home is `~/…` whatever the line did to HOME.
  const tildeHome = state.homeVar;
  const homed = tildeHome !== null && resolved.some((w, i) => i > 0 && (w === tildeHome || w.startsWith(`${tildeHome}/`)));
  if (!changed && !homed) return;
  const views = (state.views ??= new Views(resolved.join(' ')));
  addStrictViews(views, { text: resolved.join(' '), words: resolved, kind: 'simple' }, depth, []);
  if (homed) {
    const tilde = resolved.map((w) => (w === tildeHome ? '~' : tildeHome !== null && w.startsWith(`${tildeHome}/`) ? `~${w.slice(tildeHome.length)}` : w));
    addStrictViews(views, { text: tilde.join(' '), words: tilde, kind: 'simple' }, depth, []);
  }
}
