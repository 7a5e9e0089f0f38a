import micromatch from 'micromatch';
import { anyMatcher, regexMatcher, withGuard } from './required-text';

/**
 * Glob compilation for rules. Tool names, participant ids and path fields use micromatch
 * (`dot: true`: `*` stops at `/`, `**` crosses directories, dotfiles match). Other fields
 * (`command`, `targetId`, …) are text: `*` matches any characters including `/`.
 * Strict rules (deny, ask) match case-insensitively; allow rules match exactly, and
 * their `*` does not cross a line break.
 */
export type Matcher = (value: string) => boolean;

export type CompiledGlob = { ok: true; test: Matcher; re: RegExp; suffix?: string } | { ok: false; error: string };

/** A micromatch glob (paths, tool names, participant ids). */
export function compilePathGlob(pattern: string, strict: boolean): CompiledGlob {
  const cleaned = pattern.startsWith('./') ? pattern.slice(2) : pattern;
  let re: RegExp;
  try {
    re = micromatch.makeRe(cleaned, { dot: true, nocase: strict });
  } catch (error) {
    return { ok: false, error: `bad glob "${pattern}": ${(error as Error).message}` };
  }
  // micromatch turns some malformed globs (an unclosed brace) into a never-matching regex.
  if (re.source === '$^') return { ok: false, error: `bad glob "${pattern}" (unbalanced brackets or braces?)` };
  const written = pathGlobSuffix(cleaned);
  const suffix = written && regexEndsWith(re.source, written) ? written : '';
  return { ok: true, test: guardedBySuffixes(regexMatcher(re), suffix ? [suffix] : null, strict), re, ...(suffix ? { suffix } : {}) };
}

/** Characters that are never glob syntax in micromatch (a run of them at the end is literal text). */
const PLAIN_TAIL = /[A-Za-z0-9._\-\/]*$/;

/**
 * Literal text every value a micromatch path glob matches ends with (docs/rules.md#performance),
 * or '' when none is certain: the run of plain characters (`A-Z a-z 0-9 . _ - /`) after the
 * glob's last syntax character, without the slashes at its start (`**` before `/x` may match
 * nothing: `**\/x.md` matches `x.md`). No suffix for a negated glob (`!…`), one with a
 * backslash (an escape may end just before the run), or a run ending in `/`. Some globs also
 * match with one slash after the suffix (`*.md` matches `a.md/`), so the check allows one.
 */
export function pathGlobSuffix(glob: string): string {
  if (glob.startsWith('!') || glob.includes('\\') || glob.endsWith('/')) return '';
  return PLAIN_TAIL.exec(glob)![0].replace(/^\/+/, '');
}

/**
 * Whether every match of the regex `source` ends with the literal `suffix` (then at most one
 * `/`), read from the regex itself, since micromatch's translation has quirks (`***(a)..`
 * ends with `\..`, any character). The source must end with the suffix's characters (a `.`
 * escaped), then optionally `\/?`, then only `)` and `$`; every group around the suffix must
 * be a plain group without `|`, and the source must have no `|` outside groups. Anything else: false.
 */
export function regexEndsWith(source: string, suffix: string): boolean {
  let end = source.length;
  while (end > 0 && (source[end - 1] === ')' || source[end - 1] === '$')) end--;
  if (source.endsWith('\\/?', end)) end -= 3;
  let at = end;
  for (let k = suffix.length - 1; k >= 0; k--) {
    const c = suffix[k]!;
    if (at >= 2 && source[at - 2] === '\\' && source[at - 1] === c) at -= 2;
    else if (c !== '.' && source[at - 1] === c) at -= 1;
    else return false;
  }
  let backslashes = 0;
  while (at - backslashes > 0 && source[at - backslashes - 1] === '\\') backslashes++;
  if (backslashes % 2 === 1) return false;
  // The groups open at `at`, and whether each (over its whole extent) holds a `|` of its own.
  const open: { plain: boolean; alternation: boolean }[] = [];
  let around: { plain: boolean; alternation: boolean }[] | null = null;
  let topAlternation = false;
  for (let i = 0; i < source.length; i++) {
    if (i === at) around = [...open];
    const c = source[i];
    if (c === '\\') i++;
    else if (c === '[') {
      const close = classEnd(source, i);
      if (i < at && at <= close) return false;
      i = close;
    } else if (c === '(') {
      const plain = source[i + 1] !== '?' || source[i + 2] === ':';
      open.push({ plain, alternation: false });
    } else if (c === ')') open.pop();
    else if (c === '|') {
      if (open.length === 0) topAlternation = true;
      else open[open.length - 1]!.alternation = true;
    }
  }
  return around !== null && !topAlternation && around.every((g) => g.plain && !g.alternation);
}

/** The index of the `]` closing the class that opens at `from` (or the end). */
function classEnd(source: string, from: number): number {
  let i = from + 1;
  if (source[i] === '^') i++;
  if (source[i] === ']') i++;
  for (; i < source.length; i++) {
    if (source[i] === '\\') i++;
    else if (source[i] === ']') return i;
  }
  return source.length;
}

/**
 * `matcher`, first rejecting values that end with none of `suffixes` (after at most one `/`;
 * ASCII letters compared case-insensitively when `nocase`). No guard when one glob has no suffix.
 */
function guardedBySuffixes(matcher: Matcher, suffixes: readonly string[] | null, nocase: boolean): Matcher {
  if (!suffixes || suffixes.length === 0 || suffixes.some((s) => s === '')) return matcher;
  const list = nocase ? suffixes.map((s) => s.toLowerCase()) : [...suffixes];
  return withGuard(matcher, (value) => {
    const end = value.endsWith('/') ? value.length - 1 : value.length;
    for (const suffix of list) if (endsWithAt(value, end, suffix, nocase)) return true;
    return false;
  });
}

/** Whether `value.slice(0, end)` ends with `suffix` (lower-case when `nocase`: ASCII letters of `value` folded, as a regex's `i` flag without `u` does). */
function endsWithAt(value: string, end: number, suffix: string, nocase: boolean): boolean {
  const from = end - suffix.length;
  if (from < 0) return false;
  for (let k = 0; k < suffix.length; k++) {
    let c = value.charCodeAt(from + k);
    if (nocase && c >= 0x41 && c <= 0x5a) c += 0x20;
    if (c !== suffix.charCodeAt(k)) return false;
  }
  return true;
}

/** A text glob: `*` any run of characters, `?` one, `[abc]`/`[!abc]` classes, `{a,b}` alternatives, `\` escapes. */
export function compileTextGlob(pattern: string, strict: boolean): CompiledGlob {
  const any = strict ? '[\\s\\S]' : '[^\\n\\r]';
  let source: string;
  try {
    source = translate(pattern, any);
    const re = new RegExp(`^(?:${source})$`, strict ? 'i' : '');
    return { ok: true, test: regexMatcher(re), re };
  } catch (error) {
    return { ok: false, error: `bad glob "${pattern}": ${(error as Error).message}` };
  }
}

/**
 * One matcher for a list of compiled globs (any of): each glob's own matcher, guarded by its
 * suffix and required text (a value that ends otherwise, or lacks its literal, runs no regex of
 * that glob). The rule index reads the list's required text: one of each glob's.
 */
export function anyGlob(globs: readonly { test: Matcher }[]): Matcher {
  if (globs.length === 1) return globs[0]!.test;
  return anyMatcher(globs.map((g) => g.test));
}

function translate(pattern: string, any: string): string {
  let out = '';
  let braces = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) {
      out += escapeRegex(pattern[++i]!);
    } else if (c === '*') {
      while (pattern[i + 1] === '*') i++;
      out += `${any}*`;
    } else if (c === '?') {
      out += any;
    } else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close === -1) {
        out += '\\[';
      } else {
        let body = pattern.slice(i + 1, close);
        const negate = body.startsWith('!') || body.startsWith('^');
        if (negate) body = body.slice(1);
        out += `[${negate ? '^' : ''}${body.replace(/\\/g, '\\\\').replace(/\]/g, '\\]')}]`;
        i = close;
      }
    } else if (c === '{' && hasClosingBrace(pattern, i)) {
      braces++;
      out += '(?:';
    } else if (c === ',' && braces > 0) {
      out += '|';
    } else if (c === '}' && braces > 0) {
      braces--;
      out += ')';
    } else {
      out += escapeRegex(c);
    }
  }
  if (braces > 0) throw new Error('unbalanced braces');
  return out;
}

function hasClosingBrace(pattern: string, from: number): boolean {
  let depth = 0;
  for (let i = from; i < pattern.length; i++) {
    if (pattern[i] === '\\') i++;
    else if (pattern[i] === '{') depth++;
    else if (pattern[i] === '}' && --depth === 0) return true;
  }
  return false;
}

export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** Escape glob syntax so `text` matches itself literally (micromatch and text globs). */
export function escapeGlob(text: string): string {
  return text.replace(/[*?[\]{}()!+@\\|,]/g, '\\$&');
}
