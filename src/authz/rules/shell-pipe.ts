import type { ShellCommand } from './shell-split';
import { ASSIGNMENT, KEYWORDS, basename } from './shell-words';

/**
 * A download piped into a shell, found from the line's structure rather than its text
 * (docs/shell-rules.md#deny-and-ask-rules): the split's commands (quotes and escapes removed,
 * subshells, groups, `if`/`while` bodies and substitutions flattened, line continuations joined)
 * hold a downloader (curl, wget, fetch, aria2c; through wrappers: `sudo curl`, `env X=1 wget`)
 * and, after it, a command that reads a script from standard input: a shell or interpreter given
 * no script (`bash`, `sudo -u "root" bash`, `ksh93`, `python3 -`, `bash -s`), `su`, `sudo -s`,
 * `sudo -i`, `sudo su`, or a command whose name is not literal (`$SHELL`, `$(which bash)`): it
 * may be any shell. The line must hold a `|`.
 *
 * For each such pair the line gets one more deny view, `<downloader's words> | <shell>`, the shell
 * named by its family (interpreterFamily; su, sudo -s and a name that is not literal → `sh`):
 * the shipped `no-pipe-to-shell` regex (config/rules.yaml) matches it, and so does a user's own
 * rule written for the plain form (`curl * | sh`).
 *
 * Errs towards denying: the commands are taken in the order the splitter lists them, so a
 * downloader anywhere before the shell counts (`curl x | jq .; sh` is denied too); a shell whose
 * standard input is redirected (`bash <f`, `bash <<<…`) does not read the pipe and is not one.
 */
export function pipeToShellViews(line: string, commands: readonly ShellCommand[]): string[] {
  if (!line.includes('|') || commands.length < 2) return [];
  const views: string[] = [];
  let download: string | null = null;
  for (const command of commands) {
    if (command.kind !== 'simple') continue;
    const program = programAt(command.words);
    if (program === -1) continue;
    if (download !== null) {
      const shell = stdinShell(command.words, program);
      if (shell !== null) views.push(`${download} | ${shell}`);
    }
    if (DOWNLOADERS.has(basename(command.words[program]!))) download ??= command.words.slice(program).join(' ');
  }
  return views;
}

/** Programs that fetch from the network and may write what they fetched to standard output. */
const DOWNLOADERS = new Set(['curl', 'wget', 'fetch', 'aria2c']);

/**
 * Wrappers that run the rest of their words as a command after their own options (an option's
 * value may follow it: `sudo -u root bash`, `env -C /tmp bash`, `timeout -k 5 9m sh`).
 */
const PIPE_WRAPPERS = new Set([
  'sudo', 'doas', 'env', 'command', 'builtin', 'exec', 'nice', 'nohup', 'timeout', 'stdbuf', 'setsid', 'time',
  'ionice', 'chrt', 'taskset', 'unbuffer', 'busybox', 'chronic', 'numactl', 'prlimit', 'setpriv', 'faketime',
  'cpulimit', 'flock', 'runuser', 'fakeroot', 'torsocks', 'proxychains', 'proxychains4', 'firejail', 'caffeinate',
]);

/**
 * The index of the word that is the program the command runs, past keywords, assignments and
 * wrappers with their options; -1 when none. A word after an option may be that option's value
 * (`-u root`): it is skipped unless it is itself a downloader or a shell, so `sudo -u root bash`
 * runs bash and `sudo tee sh` runs tee. For `sudo`/`doas` with `-s`/`-i` and no command, the
 * wrapper itself (it starts a shell).
 */
function programAt(words: readonly string[]): number {
  let wrapper = -1;
  let afterOption = false;
  const limit = Math.min(words.length, 25);
  for (let k = 0; k < limit; k++) {
    const word = words[k]!;
    if (isRedirection(word)) continue;
    const name = basename(word);
    if (KEYWORDS.has(word) || (word.indexOf('=') > 0 && ASSIGNMENT.test(word))) continue;
    if (wrapper !== -1 && word.startsWith('-')) {
      afterOption = !word.includes('=') && word !== '--';
      continue;
    }
    // timeout's duration, nice's and chrt's numbers.
    if (wrapper !== -1 && /^[\d.]+[smhd]?$/.test(word)) {
      afterOption = false;
      continue;
    }
    if (PIPE_WRAPPERS.has(name)) {
      wrapper = k;
      afterOption = false;
      continue;
    }
    if (afterOption && !DOWNLOADERS.has(name) && interpreterFamily(name) === null && !notLiteral(word)) {
      afterOption = false;
      continue;
    }
    return k;
  }
  // `sudo -s`, `sudo -i`, `doas -s`: the wrapper starts the target user's shell.
  if (wrapper !== -1 && (basename(words[wrapper]!) === 'sudo' || basename(words[wrapper]!) === 'doas') && words.slice(wrapper + 1).some((w) => /^-[A-Za-z]*[si][A-Za-z]*$|^--(shell|login)$/.test(w))) return wrapper;
  return -1;
}

/**
 * The family name of the shell or interpreter words[program] starts when it reads its script
 * from standard input, else null: no script operand (or `-`, `/dev/stdin`), no `-c`/`-e` script,
 * standard input not redirected.
 */
function stdinShell(words: readonly string[], program: number): string | null {
  const word = words[program]!;
  const name = basename(word);
  const userShell = USER_SHELLS.has(name);
  const family = userShell || notLiteral(word) ? 'sh' : interpreterFamily(name);
  if (family === null) return null;
  const interpreter = family !== 'sh' && !SH_FAMILY.has(family);
  for (let j = program + 1; j < words.length; j++) {
    const w = words[j]!;
    if (/^0*<(?!\()/.test(w)) return null; // stdin redirected: `bash <f`, `bash <<<…`
    if (isRedirection(w)) continue;
    // programAt chose sudo/doas itself only for `-s`/`-i` without a command: the user's shell.
    if (name === 'sudo' || name === 'doas') continue;
    if (w === '-' || w === '/dev/stdin' || w === '/dev/fd/0') continue;
    if (w === '--') break; // the script's arguments follow (`bash -s -- --yes`)
    if (/^-[A-Za-z]*c[A-Za-z]*$/.test(w) || w === '--command' || (interpreter && SCRIPT_OPTIONS.has(w))) return null;
    if (!userShell && /^-[A-Za-z]*s[A-Za-z]*$/.test(w)) break; // `bash -s a b`: arguments follow
    if (w.startsWith('-') || w.startsWith('+')) {
      if (OPTION_ARGS.has(w)) j++;
      continue;
    }
    if (userShell) continue; // su's operands: a user, then the shell's arguments
    return null; // a script file
  }
  return family;
}

/** Programs that start a user's login shell, which reads standard input. */
const USER_SHELLS = new Set(['sudo', 'doas', 'su', 'runuser', 'ksu']);
const SH_FAMILY = new Set(['bash', 'sh', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'csh', 'tcsh']);

/**
 * The family a shell or interpreter program name belongs to, as the shipped regex names it
 * (`ksh93` → `ksh`, `python3.11` → `python`, `nodejs` → `node`; shells it does not name, such as
 * `yash` or `oksh`, → `sh`), or null when the name is none.
 */
function interpreterFamily(name: string): string | null {
  const match = INTERPRETER.exec(name);
  if (!match) return null;
  const family = match[1]!;
  if (family === 'nodejs') return 'node';
  return family === 'pdksh' || family === 'oksh' || family === 'yash' || family === 'osh' ? 'sh' : family;
}
const INTERPRETER = /^(bash|sh|zsh|dash|ksh|mksh|pdksh|oksh|yash|ash|fish|csh|tcsh|osh|python|perl|ruby|nodejs|node|php)[0-9.]{0,8}$/;

/** A command name bash builds when it runs: a parameter, a substitution (`$SHELL`, `$(…)`, backquotes). */
const notLiteral = (word: string): boolean => word.includes('$') || word.includes('`');

/** Options whose next word is their value (shells, interpreters, su). */
const OPTION_ARGS = new Set(['-o', '-O', '+o', '+O', '--rcfile', '--init-file', '-u', '--user', '-g', '--group', '-s', '--shell', '-W', '-X', '-I', '--require']);
/** Options that give the script on the command line or a module to run: the interpreter does not read stdin. */
const SCRIPT_OPTIONS = new Set(['-e', '-E', '--eval', '-p', '--print', '-m', '-r']);

/** A word the splitter wrote for a redirection (`>out`, `2>&1`, `<f`); not a process substitution. */
const isRedirection = (word: string): boolean => {
  const c = word.charCodeAt(0);
  return (c === 0x26 || c === 0x3c || c === 0x3e || (c >= 0x30 && c <= 0x39)) && REDIRECTION.test(word); // & < > digit
};
const REDIRECTION = /^\d*(?:&>>?|<<<|<>|<&|>&|>>|>\||<|>)(?!\()/;
