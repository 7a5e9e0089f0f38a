/**
 * Word classes shared by the shell splitter (shell-split.ts) and the strict views
 * (shell-views.ts): commands that run their arguments as a command, shell keywords that
 * precede a command, and shells whose `-c` argument is a script.
 */

/** Commands that run (part of) their arguments as a command. */
export const WRAPPERS = new Set([
  'env', 'sudo', 'doas', 'su', 'nohup', 'time', 'timeout', 'nice', 'ionice', 'chrt', 'taskset', 'stdbuf',
  'setsid', 'command', 'builtin', 'exec', 'eval', 'xargs', 'parallel', 'watch', 'strace', 'ltrace',
  'unbuffer', 'script', 'flock', 'chroot', 'busybox', 'find', 'sh', 'bash', 'zsh', 'dash', 'ksh', 'fish',
  'ash', 'mksh', 'csh', 'tcsh', 'runuser', 'systemd-run', 'nsenter', 'unshare', 'caffeinate', 'catchsegv',
  'valgrind', 'firejail', 'proot', 'fakeroot', 'torsocks', 'proxychains', 'proxychains4', 'npx', 'pnpx', 'bunx',
  'chronic', 'prlimit', 'numactl', 'faketime', 'cpulimit', 'setpriv', 'ifne',
]);
export const KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{', '}', 'fi', 'done', 'coproc']);
export const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'ash', 'mksh', 'csh', 'tcsh', 'busybox', 'su', 'runuser']);

/** `X=1`, `a[i]=1`, `X+=1`: a variable assignment word. */
export const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

/** A word after which the next words are (part of) a command: wrapper, keyword or assignment. */
export function isPrefix(word: string): boolean {
  // An assignment holds `=` after its name: most words have none, and skip the regex.
  return WRAPPERS.has(word) || KEYWORDS.has(word) || (word.indexOf('=') > 0 && ASSIGNMENT.test(word));
}

/**
 * The word after its last `/` (the word itself when it has none, or ends with one). Looked for
 * from the end by character codes: String.prototype.lastIndexOf is a call into V8's C++ runtime,
 * which cost a new line's views more than the rest of their word checks (a test compares it
 * with the lastIndexOf form on generated words).
 */
export function basename(word: string): string {
  const last = word.length - 1;
  if (last < 0 || word.charCodeAt(last) === 0x2f) return word;
  for (let i = last - 1; i >= 0; i--) if (word.charCodeAt(i) === 0x2f) return word.slice(i + 1);
  return word;
}
