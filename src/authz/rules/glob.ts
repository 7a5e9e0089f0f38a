import micromatch from 'micromatch';
import { regexMatcher } from './required-text';

/**
 * Glob compilation for rules. Tool names, participant ids and path fields use micromatch
 * (`dot: true`: `*` stops at `/`, `**` crosses directories, dotfiles match). Other fields
 * (`command`, `targetId`, …) are text: `*` matches any characters including `/`.
 * Strict rules (deny, ask) match case-insensitively; allow rules match exactly, and
 * their `*` does not cross a line break.
 */
export type Matcher = (value: string) => boolean;

export type CompiledGlob = { ok: true; test: Matcher; re: RegExp } | { ok: false; error: string };

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
  return { ok: true, test: regexMatcher(re), re };
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
 * One matcher for a list of compiled globs (any of): their regexes joined into a single
 * alternation, so a 20-pattern list costs one regex test. Falls back to testing each.
 */
export function anyGlob(globs: readonly { re: RegExp }[]): Matcher {
  if (globs.length === 1) {
    return regexMatcher(globs[0]!.re);
  }
  const flags = globs[0]!.re.flags;
  if (globs.every((g) => g.re.flags === flags) && globs.every((g) => !/\\[1-9]/.test(g.re.source))) {
    try {
      return regexMatcher(new RegExp(globs.map((g) => `(?:${g.re.source})`).join('|'), flags));
    } catch {
      // fall through
    }
  }
  return (value) => globs.some((g) => g.re.test(value));
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
