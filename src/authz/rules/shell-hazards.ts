import { ASSIGNMENT, basename, isPrefix } from './shell-words';

/**
 * Constructs with which bash builds and runs code out of data, which no text rule can see
 * through. The splitter (shell-split.ts) fails on them, so the command asks, never allows.
 * Each returns the failure message, or null when the construct is harmless.
 */

/** One word of a simple command: its dequoted value and its unquoted characters (quoted or expanded parts as NUL). */
export interface Word {
  readonly value: string;
  readonly bare: string;
}

/** `{a,b}` or `{1..3}` outside quotes: bash expands it into several words. */
const BRACE_EXPANSION = /\{[^{}]*(,|\.\.)[^{}]*\}/;
/** `*`, `?` or `[…]` outside quotes: bash replaces the word with matching file names. */
const GLOB = /[*?]|\[[^\]]*\]/;

/**
 * Brace expansion or a glob pattern where bash expects a command name: the first word that
 * is not an assignment (`{rm,-rf,~}` runs `rm -rf ~`, `/bin/r?` runs `/bin/rm`), and brace
 * expansion in any word after a wrapper or keyword (`sudo {rm,-rf,~}`).
 */
export function commandWordHazard(words: readonly Word[]): string | null {
  let k = 0;
  while (k < words.length && ASSIGNMENT.test(words[k]!.bare)) k++;
  const name = words[k];
  if (!name) return null;
  if (BRACE_EXPANSION.test(name.bare)) return `brace expansion in the command name ${JSON.stringify(name.value)}`;
  if (GLOB.test(name.bare)) return `file-name pattern in the command name ${JSON.stringify(name.value)}`;
  if (!isPrefix(basename(name.value))) return null;
  for (const word of words.slice(k + 1)) {
    if (BRACE_EXPANSION.test(word.bare)) return `brace expansion after ${JSON.stringify(name.value)}`;
  }
  return null;
}

/**
 * Hazards inside one `${…}` (given without `${` and `}`):
 *   - `${x@P}` expands the value as a prompt, running the substitutions in it;
 *   - `${!x}` (indirection) evaluates the value as a name, and `a[$(cmd)]` runs `cmd`;
 *   - a subscript or substring offset other than a number is arithmetic, which evaluates
 *     variables holding `a[$(cmd)]` the same way;
 *   - `${x=…}` / `${x:=…}` assign inside a word, which is how one command would plant
 *     such a value for the constructs above.
 * `${!a[@]}`, `${!a[*]}`, `${!prefix*}` and `${!prefix@}` only list names and are allowed.
 */
export function braceHazard(inner: string): string | null {
  if (/@P$/.test(inner)) return 'prompt expansion "${…@P}" is not supported';
  const m = /^([!#]?)([A-Za-z_][A-Za-z0-9_]*|\d+|[#?$!@*-])(?:\[([^\]]*)\])?([\s\S]*)$/.exec(inner);
  if (!m) return null;
  const [, prefix, , subscript, rest = ''] = m;
  const listing = subscript === '@' || subscript === '*' || rest === '*' || rest === '@';
  if (prefix === '!' && !listing) return 'indirect expansion "${!…}" is not supported';
  if (subscript !== undefined && !/^\s*(-?\d+|@|\*)\s*$/.test(subscript)) return 'a non-numeric array subscript in "${…}" is not supported';
  if (/^:?=/.test(rest)) return 'assignment in "${…=…}" is not supported';
  if (rest.startsWith(':') && !/^:[-=?+]/.test(rest) && !/^:[\s\d:+-]*$/.test(rest)) return 'a non-numeric offset in "${…:…}" is not supported';
  return null;
}
