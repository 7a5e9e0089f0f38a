/**
 * A cheap pre-check for rule regexes (docs/rules.md#performance): literal text at least one of
 * which every match must contain, read from the regex source. A value that contains none of
 * them cannot match, so the regex itself is not run. Most rules do not match most calls, and
 * a rule regex (a micromatch path glob, a deny with lookaheads and `.*`) costs far more than
 * one search for a literal.
 *
 * Sound by construction, never complete: anything this reader does not understand (`\x41`,
 * `\u{…}`, `\k<…>`, `\p{…}`, octal escapes, a `{` that is not a quantifier, the `u`/`v` flags)
 * gives no pre-check at all, and every construct it is unsure of only ends the current literal
 * run. The pre-check is itself a regex of escaped literals with the original's flags, so case
 * folding is exactly the original's.
 */
/** More alternatives than this: no pre-check (one search per alternative would cost more). */
const MAX_ALTERNATIVES = 24;

/** `re.test`, preceded by the required-literal pre-check when one is known. */
export function regexMatcher(re: RegExp): (value: string) => boolean {
  const required = requiredLiterals(re.source, re.flags);
  const matcher = preCheckedMatcher(re, required);
  if (required) requiredByMatcher.set(matcher, required);
  return matcher;
}

/**
 * Literals one of which every value `matcher` accepts contains (case-folded as its regex's
 * flags say), or undefined when unknown: for matchers made by regexMatcher only. The rule
 * index (rule-index.ts) files rules under them.
 */
export function requiredTextOf(matcher: (value: string) => boolean): readonly string[] | undefined {
  return requiredByMatcher.get(matcher);
}

const requiredByMatcher = new WeakMap<(value: string) => boolean, readonly string[]>();

/**
 * `matcher` preceded by `guard`, a cheaper necessary condition (a value it rejects, `matcher`
 * rejects too), keeping `matcher`'s required text for the rule index.
 */
export function withGuard(matcher: (value: string) => boolean, guard: (value: string) => boolean): (value: string) => boolean {
  const guarded = (value: string): boolean => guard(value) && matcher(value);
  const required = requiredByMatcher.get(matcher);
  if (required) requiredByMatcher.set(guarded, required);
  return guarded;
}

/**
 * Whether any of `matchers` accepts a value, tested in order. Its required text, for the rule
 * index, is the union of theirs when each has some (a value any of them accepts holds one).
 */
export function anyMatcher(matchers: readonly ((value: string) => boolean)[]): (value: string) => boolean {
  const any = (value: string): boolean => {
    for (const matcher of matchers) if (matcher(value)) return true;
    return false;
  };
  const each = matchers.map((m) => requiredByMatcher.get(m));
  if (each.every((r) => r !== undefined)) {
    const union = [...new Set(each.flatMap((r) => r!))];
    if (union.length <= MAX_ALTERNATIVES) requiredByMatcher.set(any, union);
  }
  return any;
}

function preCheckedMatcher(re: RegExp, required: string[] | null): (value: string) => boolean {
  if (!required) return (value) => re.test(value);
  // A search for a string is cheaper than a regex call where case cannot matter.
  if (!re.flags.includes('i') || required.every((l) => !/[A-Za-z]/.test(l) && /^[\x00-\x7f]*$/.test(l))) {
    if (required.length === 1) {
      const literal = required[0]!;
      return (value) => value.includes(literal) && re.test(value);
    }
    return (value) => required.some((l) => value.includes(l)) && re.test(value);
  }
  const pre = new RegExp(required.map(escapeLiteral).join('|'), re.flags.replace(/[gys]/g, ''));
  return (value) => pre.test(value) && re.test(value);
}

/**
 * Literals one of which every string matching `source` contains, or null when none is known.
 * Exported for tests.
 */
export function requiredLiterals(source: string, flags: string): string[] | null {
  if (/[uv]/.test(flags)) return null;
  const reader = new Reader(source);
  try {
    const found = reader.alternation();
    if (reader.i !== source.length) return null;
    const unique = found ? [...new Set(found)] : null;
    return unique && unique.length <= MAX_ALTERNATIVES ? unique : null;
  } catch (error) {
    if (error instanceof Unknown) return null;
    throw error;
  }
}

/** Syntax this reader does not understand: no pre-check. */
class Unknown {}

/** `{n}`, `{n,}`, `{n,m}`: in a regex without the `u` flag any other `{` is a literal. */
const BRACE_QUANTIFIER = /^\{(\d+)(,\d*)?\}/;
const SYNTAX = new Set(['\\', '^', '$', '.', '|', '?', '*', '+', '(', ')', '[', ']', '{', '}']);

class Reader {
  i = 0;

  constructor(private readonly s: string) {}

  /** Alternatives up to `)` or the end: one literal of each branch's best, or null if a branch has none. */
  alternation(): string[] | null {
    const all: string[] = [];
    let known = true;
    for (;;) {
      const branch = this.sequence();
      if (branch) all.push(...branch);
      else known = false;
      if (this.s[this.i] !== '|') return known ? all : null;
      this.i++;
    }
  }

  /** A sequence of atoms up to `|`, `)` or the end: its most selective required set. */
  private sequence(): string[] | null {
    const s = this.s;
    const sets: string[][] = [];
    let run = '';
    const endRun = (): void => {
      if (run.length > 0) sets.push([run]);
      run = '';
    };
    while (this.i < s.length && s[this.i] !== '|' && s[this.i] !== ')') {
      const c = s[this.i]!;
      let literal: string | null = null;
      let inner: string[] | null = null;
      if (c === '(') {
        this.i++;
        let keep = true;
        if (s.startsWith('?:', this.i) || s.startsWith('?=', this.i)) this.i += 2;
        else if (s.startsWith('?!', this.i)) (this.i += 2), (keep = false);
        else if (s.startsWith('?<=', this.i)) this.i += 3;
        else if (s.startsWith('?<!', this.i)) (this.i += 3), (keep = false);
        else if (s.startsWith('?<', this.i)) {
          const close = s.indexOf('>', this.i);
          if (close === -1) throw new Unknown();
          this.i = close + 1;
        } else if (s[this.i] === '?') throw new Unknown();
        const found = this.alternation();
        if (s[this.i] !== ')') throw new Unknown();
        this.i++;
        inner = keep ? found : null;
      } else if (c === '[') {
        // A class: up to its `]` (a `]` right after `[` or `[^` closes it: `[]` never matches).
        let j = this.i + 1;
        if (s[j] === '^') j++;
        while (j < s.length && s[j] !== ']') j += s[j] === '\\' ? 2 : 1;
        if (j >= s.length) throw new Unknown();
        this.i = j + 1;
      } else if (c === '\\') {
        const n = s[this.i + 1];
        if (n === undefined) throw new Unknown();
        if (/[0-9]/.test(n)) {
          // `\1` a back-reference; `\12`, `\01` may be octal escapes: not read.
          if (/[0-9]/.test(s[this.i + 2] ?? '') || n === '0') throw new Unknown();
        } else if (/[xucpPkq]/.test(n)) {
          throw new Unknown();
        } else if (!/[A-Za-z]/.test(n)) {
          literal = n;
        }
        // Other letters (`\d \w \s \b \n \t`…): a class, an assertion or a control character.
        this.i += 2;
      } else if (c === '{' || c === '}' || c === ']' || c === '?' || c === '*' || c === '+') {
        // A quantifier with nothing before it, or a lone brace: not read.
        throw new Unknown();
      } else {
        // `.`, `^`, `$`: no literal; anything else is itself.
        if (!SYNTAX.has(c)) literal = c;
        this.i++;
      }
      const min = this.quantifier();
      if (literal !== null) {
        if (min === null) run += literal;
        else {
          endRun();
          if (min > 0) sets.push([literal]);
        }
      } else {
        endRun();
        if (inner && (min === null || min > 0)) sets.push(inner);
      }
    }
    endRun();
    let best: string[] | null = null;
    for (const set of sets) if (!best || score(set) > score(best)) best = set;
    return best;
  }

  /** A quantifier after an atom: its minimum count, or null when there is none. */
  private quantifier(): number | null {
    const s = this.s;
    const c = s[this.i];
    let min: number;
    if (c === '*' || c === '?') (min = 0), this.i++;
    else if (c === '+') (min = 1), this.i++;
    else if (c === '{') {
      const m = BRACE_QUANTIFIER.exec(s.slice(this.i));
      if (!m) throw new Unknown();
      min = Number(m[1]);
      this.i += m[0].length;
    } else return null;
    if (s[this.i] === '?') this.i++;
    if (/^[*+?{]/.test(s[this.i] ?? '')) throw new Unknown();
    return min;
  }
}

/** How selective a set of alternatives is: its shortest literal, fewer alternatives first. */
function score(set: readonly string[]): number {
  return Math.min(...set.map((l) => l.length)) * 100 - set.length;
}

function escapeLiteral(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
