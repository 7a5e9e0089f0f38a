import { MAX_SHELL_LENGTH, type ShellCommand, type ShellSplit } from './shell-split';

/**
 * The plain-words parse of a shell command line: the only form an `allow` rule can apply to
 * (docs/shell-rules.md#plain-words).
 *
 * A positive grammar. A line is plain when it is a list of simple commands joined by `;`,
 * `&&`, `||`, `|` or newlines, and every simple command is made only of
 *   - words built from literal characters (`A-Z a-z 0-9 _ . / : , = @ % + ^ -`, `]`, any
 *     non-ASCII character, `~` inside a word but not at its start nor after `=` or `:`,
 *     the pair `{}`), backslash escapes, single-quoted text, and double-quoted text without
 *     `$` or backquotes;
 *   - file-name patterns (`*`, `?`, `[`) in words after the command name (the word is
 *     marked `pattern`: bash may replace it by file names);
 *   - redirections to or from `/dev/null` and fd duplications (`2>&1`, `>&2`, `>&-`).
 * The command name must not be a pattern, an assignment (`X=1 cmd`) or a reserved word
 * (`if`, `for`, `!`, `time`…). Anything else — every expansion, substitution, arithmetic,
 * here-document, group, subshell, comment, `&`, a redirection to a file, and any character
 * this grammar does not list — makes the line not plain, naming the first such part. A
 * context nobody thought of is therefore not plain either.
 */
export interface PlainCommand {
  /** The words after quote removal: argv as the program receives it (patterns unexpanded). */
  readonly argv: readonly string[];
  /**
   * Indices into argv, ascending, of the words with an unquoted `*`, `?` or `[`: bash may
   * replace them with matching file names (no object per word: most commands have none).
   */
  readonly patterns: readonly number[];
  /** Redirections as written (only `/dev/null` targets and fd duplications are plain). */
  readonly redirects: readonly string[];
}

/** The `patterns` of a command without any (shared, never changed). */
const NO_PATTERNS: readonly number[] = Object.freeze([]);

export type PlainParse =
  | { readonly plain: true; readonly commands: readonly PlainCommand[] }
  | {
      readonly plain: false;
      /** What is not plain, in words, with the offending text: `parameter expansion "${x:-…}"`. */
      readonly why: string;
      /** 0-based offset of the offending part in the line. */
      readonly at: number;
    };

/** Words bash reads as syntax where a command name is expected. */
export const RESERVED_WORDS: ReadonlySet<string> = new Set([
  'if', 'then', 'else', 'elif', 'fi', 'case', 'esac', 'for', 'select', 'while', 'until', 'do', 'done',
  'in', 'function', 'time', '{', '}', '!', '[[', ']]', 'coproc',
]);

/**
 * Why the scanner stopped: kept on the scanner (PlainScanner.failure), never thrown — a refusal is
 * common (every line that is not plain is scanned first) and a throw costs a microsecond or more.
 */
class NotPlain {
  constructor(
    /** The reason, or how to write it (quoting an excerpt costs more than most refusals, and is read only when shown). */
    readonly why: string | (() => string),
    readonly at: number,
  ) {}
}

/**
 * A refusal whose reason is written on first read (then kept): a class with its getter on the
 * prototype (an object literal with a getter is slow to make, and every line that is not plain
 * makes one). parsePlain returns it as a plain object.
 */
class LazyNotPlain {
  readonly plain = false as const;
  readonly at: number;
  private reason: string | (() => string);
  constructor(error: NotPlain) {
    this.reason = error.why;
    this.at = error.at;
  }
  get why(): string {
    const reason = this.reason;
    return typeof reason === 'string' ? reason : (this.reason = reason());
  }
}

const PATTERN = /[*?[]/;
/** Per ASCII code: 1 for the literal characters `A-Z a-z 0-9 _ . / : , = @ % + ^ - ]` (any code ≥ 0x80 is literal too). */
const LITERAL_CODES = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:,=@%+^-]') LITERAL_CODES[c.charCodeAt(0)] = 1;
const isLiteral = (code: number): boolean => code >= 0x80 || LITERAL_CODES[code] === 1;
/** `>&2`, `<&0`, `>&-`: the target of a duplication (sticky: matched in place, no copy of the rest). */
const DUPLICATION = /(\d+|-)(?=$|[\s;&|<>])/y;
const ASSIGNMENT_START = /^[A-Za-z_][A-Za-z0-9_]*\+?=/;
const DIGITS = /^\d+$/;
/** Longest excerpt quoted in a reason. */
const EXCERPT = 40;

export function parsePlain(line: string): PlainParse {
  const parse = scanPlain(line).parse;
  return parse.plain ? parse : { plain: false, why: parse.why, at: parse.at };
}

/**
 * The plain-words parse and, for a plain line, the splitter's result for it (shell-split.ts):
 * the simple commands with their tokens in order (redirections included) in source form and
 * without quotes, exactly what `splitShell(line)` returns for every plain line no longer than
 * MAX_SHELL_LENGTH (property-tested), so a plain line is scanned once for deny, ask and allow.
 * `split` is null when the line is not plain (or too long): the splitter must read it.
 */
export function scanPlain(line: string): { readonly parse: PlainParse; readonly split: ShellSplit | null } {
  const scanner = new PlainScanner(line);
  const commands = scanner.parse();
  if (commands === null) return { parse: new LazyNotPlain(scanner.failure!), split: null };
  // splitShell refuses a longer line whatever it holds.
  return { parse: { plain: true, commands }, split: line.length > MAX_SHELL_LENGTH ? null : { ok: true, commands: scanner.split } };
}

/** One line of text as words joined by single spaces; a word that is empty or holds whitespace is single-quoted, so one word never reads as two. */
export function argvText(argv: readonly string[]): string {
  let text = '';
  for (let i = 0; i < argv.length; i++) {
    const w = argv[i]!;
    if (i > 0) text += ' ';
    text += w === '' || hasWhitespace(w) ? `'${w.replace(/'/g, `'\\''`)}'` : w;
  }
  return text;
}

/** `/\s/.test(word)`, without a regex call for an ASCII word (most words): JavaScript's ASCII whitespace is space and \t \n \v \f \r. */
export function hasWhitespace(word: string): boolean {
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) return true;
    if (c >= 0x80) return /\s/.test(word);
  }
  return false;
}

class PlainScanner {
  private i = 0;
  /** Each simple command as splitShell reports it, built alongside. */
  readonly split: ShellCommand[] = [];
  /** Whether the word being read had a line continuation (its source text then differs from splitShell's raw form). */
  private continued = false;
  /**
   * What word() read besides the word's value (fields, not a new object per word): whether it
   * is a file-name pattern, whether no part was quoted or escaped, its text as bash tokenizes it
   * (`logical`) and its source form as the splitter keeps it (`raw`).
   */
  private wordPattern = false;
  private wordAllUnquoted = true;
  private wordLogical = '';
  private wordRaw = '';
  /** The current command's text as the splitter writes it: a span of the source while `asWritten`, else `text` (append). */
  private text = '';
  private asWritten = true;
  private textStart = -1;
  private textEnd = -1;
  /**
   * Set by fail(): the first part that is not plain. Every method stops at once and returns
   * null (or '' for word() and doubleQuoted(): their callers read `failure`), so `i` stays where
   * the scan stopped (a reason written later quotes from it).
   */
  failure: NotPlain | null = null;

  constructor(private readonly s: string) {}

  private excerpt(from: number, to = from + 1): string {
    const text = this.s.slice(from, Math.max(to, from + 1));
    return JSON.stringify(text.length > EXCERPT ? `${text.slice(0, EXCERPT - 1)}…` : text);
  }

  private fail(why: string | (() => string), at: number): null {
    this.failure = new NotPlain(why, at);
    return null;
  }

  /** The simple commands, or null when the line is not plain (`failure` says why). */
  parse(): PlainCommand[] | null {
    const s = this.s;
    const commands: PlainCommand[] = [];
    let needCommand = false;
    for (;;) {
      this.skipBlanks(true);
      if (this.i >= s.length) {
        if (needCommand) return this.fail(() => `nothing after the operator at the end`, s.length);
        return commands;
      }
      const command = this.command();
      if (command === null) return null;
      commands.push(command);
      this.skipBlanks(false);
      if (this.i >= s.length) return commands;
      const c = s[this.i]!;
      const two = s.slice(this.i, this.i + 2);
      if (two === '&&' || two === '||') {
        this.i += 2;
        needCommand = true;
      } else if (two === '|&') {
        return this.fail(() => `the pipe ${this.excerpt(this.i, this.i + 2)} (it also redirects stderr)`, this.i);
      } else if (c === '|') {
        this.i++;
        needCommand = true;
      } else if (two === ';;') {
        return this.fail(() => `${this.excerpt(this.i, this.i + 2)} (case syntax)`, this.i);
      } else if (c === ';' || c === '\n') {
        this.i++;
        needCommand = false;
        this.skipBlanks(true);
        if (this.s[this.i] === ';') return this.fail('an empty command before ";"', this.i);
      } else if (c === '&') {
        return this.fail('a background command "&"', this.i);
      } else {
        return this.fail(() => `${this.excerpt(this.i)}`, this.i);
      }
    }
  }

  /** Blanks, line continuations and (when `newlines`) newlines. */
  private skipBlanks(newlines: boolean): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s[this.i];
      if (c === ' ' || c === '\t' || (newlines && c === '\n')) this.i++;
      else if (c === '\\' && s[this.i + 1] === '\n') this.i += 2;
      else break;
    }
  }

  private command(): PlainCommand | null {
    const s = this.s;
    const start = this.i;
    const redirects: string[] = [];
    // The splitter's view of the same command: every token in order, as written and unquoted.
    // Its text is the tokens' raw forms joined by single spaces: while every token reads as
    // written and is one space after the last, that is the source from the first token to the
    // last, taken as one slice at the end (no string made per token); else built token by token.
    this.text = '';
    this.asWritten = true;
    this.textStart = -1;
    this.textEnd = -1;
    const tokens: string[] = [];
    // The words alone, made only once a redirection is among the tokens (until then the tokens are the words).
    let words: string[] | null = null;
    let count = 0;
    let patterns: number[] | null = null;
    for (;;) {
      this.skipBlanks(false);
      const c = s[this.i];
      if (c === undefined || c === '\n' || c === ';' || c === '|' || (c === '&' && s[this.i + 1] !== '>')) break;
      if (c === '<' || c === '>' || c === '&') {
        words ??= tokens.slice();
        const from = this.i;
        const r = this.redirect(from, '');
        if (r === null) return null;
        redirects.push(r.written);
        this.append(from, r.raw);
        tokens.push(r.value);
        continue;
      }
      const wordStart = this.i;
      const isName = count === 0;
      const value = this.word(isName);
      if (this.failure !== null) return null;
      const { wordPattern: pattern, wordRaw: raw } = this;
      const next = s[this.i];
      if ((next === '<' || next === '>') && this.wordAllUnquoted && DIGITS.test(value)) {
        words ??= tokens.slice();
        const r = this.redirect(wordStart, value);
        if (r === null) return null;
        redirects.push(r.written);
        this.append(wordStart, r.raw);
        tokens.push(r.value);
        continue;
      }
      if (isName) {
        if (ASSIGNMENT_START.test(this.wordLogical)) return this.fail(() => `a variable assignment ${this.excerpt(wordStart, this.i)} before the command`, wordStart);
        if (pattern) return this.fail(() => `a file-name pattern in the command name ${this.excerpt(wordStart, this.i)}`, wordStart);
        if (RESERVED_WORDS.has(value)) return this.fail(() => `the shell keyword ${this.excerpt(wordStart, this.i)}`, wordStart);
      }
      if (pattern) (patterns ??= []).push(count);
      count++;
      words?.push(value);
      this.append(wordStart, raw);
      tokens.push(value);
    }
    if (count === 0) return this.fail(redirects.length > 0 ? 'a redirection without a command' : 'an empty command', start);
    const text = this.asWritten ? s.slice(this.textStart, this.textEnd) : this.text;
    this.split.push({ text, words: tokens, kind: 'simple' });
    // Without redirections the splitter's tokens are the argv (both read-only: one array).
    return { argv: words ?? tokens, patterns: patterns ?? NO_PATTERNS, redirects };
  }

  /**
   * Appends the token `raw` (read from `from` to the scanner's position) to the command's text:
   * kept as the source span [textStart, textEnd) while every token is its source text (its
   * length is the length read: a token's raw form is its source less blanks and line
   * continuations) one space after the last; else joined in `text` as the splitter does.
   */
  private append(from: number, raw: string): void {
    const to = this.i;
    if (this.asWritten) {
      const start = this.textStart;
      if (to - from === raw.length && (start === -1 || (from === this.textEnd + 1 && this.s.charCodeAt(this.textEnd) === 0x20))) {
        if (start === -1) this.textStart = from;
        this.textEnd = to;
        return;
      }
      // From here on, joined: what came before is the source span.
      this.text = start === -1 ? '' : this.s.slice(start, this.textEnd);
      this.asWritten = false;
    }
    this.text = this.text === '' ? raw : `${this.text} ${raw}`;
  }

  /**
   * A redirection starting at `from` (its fd digits, if any, already read as `fd`): as the
   * plain parse lists it (`written`), and as the splitter does (`raw` in source form, `value` unquoted).
   */
  private redirect(from: number, fd: string): { written: string; raw: string; value: string } | null {
    const s = this.s;
    const op = /^(&>>|&>|<<<|<<|<>|<&|>&|>>|>\||<|>)/.exec(s.slice(this.i, this.i + 3))?.[0];
    if (!op) return this.fail(() => `${this.excerpt(this.i)}`, this.i);
    if (op === '<<' || op === '<<<') return this.fail(() => `a here-document ${this.excerpt(this.i, this.i + op.length)}`, this.i);
    if (s[this.i + op.length] === '(') return this.fail(() => `process substitution ${this.excerpt(this.i, this.i + 2)}`, this.i);
    this.i += op.length;
    this.skipBlanks(false);
    const targetStart = this.i;
    if (op === '>&' || op === '<&') {
      DUPLICATION.lastIndex = this.i;
      const m = DUPLICATION.exec(s);
      if (m) {
        this.i += m[0].length;
        const token = fd + op + m[0];
        return { written: s.slice(from, this.i), raw: token, value: token };
      }
    }
    const c = s[this.i];
    if (c === undefined || /[\s;&|<>()]/.test(c)) return this.fail(() => `a redirection ${this.excerpt(from, this.i)} without a target`, from);
    const target = this.word(false);
    if (this.failure !== null) return null;
    if (target !== '/dev/null' || this.wordPattern) {
      return this.fail(() => `a redirection to or from a file ${this.excerpt(from, this.i)} (only /dev/null and 2>&1-style duplications are plain)`, targetStart);
    }
    const value = `${fd}${op}/dev/null`;
    return { written: value, raw: fd + op + this.wordRaw, value };
  }

  /** One word: literal characters, escapes, single quotes and double quotes without expansions. Its value ('' after a failure); the rest of what it read in the `word…` fields. */
  private word(isName: boolean): string {
    const s = this.s;
    const start = this.i;
    this.continued = false;
    let value = '';
    let pattern = false;
    let allUnquoted = true;
    // The word as bash tokenizes it: raw text with line continuations removed (bash removes
    // them before anything else, so `a=\<newline>~` is `a=~` and `a\<newline>=1` an assignment).
    let logical = '';
    for (;;) {
      // A run of literal characters at once (one slice, not one string per character).
      if (this.i < s.length && isLiteral(s.charCodeAt(this.i))) {
        let end = this.i + 1;
        while (end < s.length && isLiteral(s.charCodeAt(end))) end++;
        const run = s.slice(this.i, end);
        value += run;
        logical += run;
        this.i = end;
        continue;
      }
      const c = s[this.i];
      if (c === undefined || c === ' ' || c === '\t' || c === '\n' || c === ';' || c === '&' || c === '|' || c === '<' || c === '>') break;
      const at = this.i;
      if (c !== '\\' || s[this.i + 1] !== '\n') logical += c === '\\' ? s.slice(at, at + 2) : c;
      if (c === '\\') {
        const n = s[this.i + 1];
        if (n === undefined) return this.failWord('a backslash at the end of the line', at);
        this.i += 2;
        if (n !== '\n') {
          value += n;
          allUnquoted = false;
        } else this.continued = true;
      } else if (c === "'") {
        const close = s.indexOf("'", this.i + 1);
        if (close === -1) return this.failWord(() => `an unclosed quote ${this.excerpt(at, s.length)}`, at);
        value += s.slice(this.i + 1, close);
        logical += s.slice(this.i + 1, close + 1);
        this.i = close + 1;
        allUnquoted = false;
      } else if (c === '"') {
        const open = this.i;
        value += this.doubleQuoted();
        if (this.failure !== null) return '';
        logical += s.slice(open + 1, this.i);
        allUnquoted = false;
      } else if (c === '$') {
        return this.failWord(() => `${describeDollar(s, at)} ${this.excerpt(at, dollarEnd(s, at))}`, at);
      } else if (c === '`') {
        return this.failWord(() => `command substitution ${this.excerpt(at, s.indexOf('`', at + 1) + 1 || s.length)}`, at);
      } else if (c === '~') {
        // `logical` already ends with this `~`: what precedes it is what bash sees.
        const prev = logical[logical.length - 2];
        if (prev === undefined || prev === '=' || prev === ':') return this.failWord(() => `tilde expansion ${this.excerpt(at, this.wordEnd(at))}`, at);
        value += c;
        this.i++;
      } else if (c === '{' && s[this.i + 1] === '}') {
        value += '{}';
        this.i += 2;
      } else if (PATTERN.test(c)) {
        if (isName) return this.failWord(() => `a file-name pattern in the command name ${this.excerpt(start, this.wordEnd(start))}`, at);
        pattern = true;
        value += c;
        this.i++;
      } else {
        return this.failWord(() => `${describeChar(c)} ${this.excerpt(at, c === '(' || c === '{' ? this.closing(at) : at + 1)}`, at);
      }
    }
    // A word of literal characters only (most words) is its own source text: no second copy.
    const source = allUnquoted && !pattern && value.length === this.i - start ? value : s.slice(start, this.i);
    this.wordPattern = pattern;
    this.wordAllUnquoted = allUnquoted;
    this.wordLogical = logical;
    this.wordRaw = this.continued ? withoutContinuations(source) : source;
    return value;
  }

  /** fail() for word() and doubleQuoted(): '' (their caller reads `failure`). */
  private failWord(why: string | (() => string), at: number): string {
    this.fail(why, at);
    return '';
  }

  /** `"…"` without `$` or backquotes; `\$ \` \" \\` and line continuations as bash reads them. */
  private doubleQuoted(): string {
    const s = this.s;
    const open = this.i;
    let value = '';
    this.i++;
    for (;;) {
      const c = s[this.i];
      if (c === undefined) return this.failWord(() => `an unclosed quote ${this.excerpt(open, s.length)}`, open);
      const at = this.i;
      if (c === '"') {
        this.i++;
        return value;
      }
      if (c === '$') return this.failWord(() => `${describeDollar(s, at)} ${this.excerpt(at, dollarEnd(s, at))} inside double quotes`, at);
      if (c === '`') return this.failWord(() => `command substitution ${this.excerpt(at, s.indexOf('`', at + 1) + 1 || s.length)} inside double quotes`, at);
      if (c === '\\') {
        const n = s[this.i + 1];
        if (n === undefined) return this.failWord(() => `an unclosed quote ${this.excerpt(open, s.length)}`, open);
        this.i += 2;
        if (n === '\n') {
          this.continued = true;
          continue;
        }
        value += '$`"\\'.includes(n) ? n : c + n;
        continue;
      }
      value += c;
      this.i++;
    }
  }

  private wordEnd(from: number): number {
    let j = from;
    while (j < this.s.length && !/[\s;&|<>]/.test(this.s[j]!)) j++;
    return j;
  }

  /** Where the bracket opened at `from` closes (for quoting it), or the line's end. */
  private closing(from: number): number {
    const open = this.s[from]!;
    const close = open === '(' ? ')' : '}';
    let depth = 0;
    for (let j = from; j < this.s.length; j++) {
      if (this.s[j] === open) depth++;
      else if (this.s[j] === close && --depth === 0) return j + 1;
    }
    return this.s.length;
  }
}

/**
 * A plain word's source text as the splitter keeps it: line continuations (backslash-newline)
 * removed, except inside single quotes where they are literal text.
 */
function withoutContinuations(source: string): string {
  let out = '';
  let double = false;
  for (let j = 0; j < source.length; j++) {
    const c = source[j]!;
    if (c === "'" && !double) {
      const close = source.indexOf("'", j + 1);
      out += source.slice(j, close + 1);
      j = close;
    } else if (c === '\\') {
      if (source[j + 1] !== '\n') out += source.slice(j, j + 2);
      j++;
    } else {
      if (c === '"') double = !double;
      out += c;
    }
  }
  return out;
}

function describeDollar(s: string, at: number): string {
  const n = s[at + 1];
  if (n === '(') return s[at + 2] === '(' ? 'arithmetic expansion' : 'command substitution';
  if (n === '[') return 'arithmetic expansion';
  if (n === "'") return 'ANSI-C quoting';
  if (n === '"') return 'locale quoting';
  return 'parameter expansion';
}

/** The end of the `$…` construct at `at`, for quoting it (balanced brackets, else the name). */
function dollarEnd(s: string, at: number): number {
  const n = s[at + 1];
  const pairs: Record<string, string> = { '(': ')', '{': '}', '[': ']' };
  const close = n === undefined ? undefined : pairs[n];
  if (close) {
    let depth = 0;
    for (let j = at + 1; j < s.length; j++) {
      if (s[j] === '\\') j++;
      else if (s[j] === n) depth++;
      else if (s[j] === close && --depth === 0) return j + 1;
    }
    return s.length;
  }
  const m = /^\$([A-Za-z_][A-Za-z0-9_]*|[0-9#?$!@*-])?/.exec(s.slice(at))!;
  return at + m[0].length;
}

function describeChar(c: string): string {
  switch (c) {
    case '(':
    case ')':
      return 'a subshell or function definition';
    case '{':
    case '}':
      return 'a group or brace expansion';
    case '#':
      return 'a comment';
    case '!':
      return 'a "!"';
    default:
      return `the character ${JSON.stringify(c)}`;
  }
}
