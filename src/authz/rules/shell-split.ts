import { decodeAnsiC } from './shell-ansi-c';
import { braceHazard, commandWordHazard, type Word } from './shell-hazards';

/**
 * Split a shell command line into the simple commands it would run, for the deny and ask
 * rules (allow rules see only the plain-words parse, shell-plain.ts).
 *
 * Separators: `;` `&&` `||` `|` `|&` `&` and newlines. Nested commands are extracted
 * recursively and listed as commands of their own: `$(…)`, backticks (also inside double
 * quotes and `${…}`), `( … )` subshells, `{ …; }` groups and process substitution
 * `<(…)` / `>(…)`.
 *
 * Each command's `text` is its words in source form (quotes kept) joined by one space, with
 * redirections written without a space before the target (`>out.txt`, `2>&1`, `<<<word`).
 * A subshell or group followed by a redirection is listed once more as a whole
 * (`kind: 'compound'`), so the redirection is never lost.
 *
 * Substitutions are extracted wherever bash might run them, erring towards too many:
 * process substitution inside `${…}` (`${x:-<(cmd)}`) is extracted too;
 * inside a double-quoted `${…}` single quotes are plain characters to bash
 * (`"${x:-'$(cmd)'}"` runs `cmd`), and array subscripts expand even single-quoted text,
 * so a single-quoted part of any `${…}` is searched for substitutions too.
 *
 * Anything this scanner does not understand, and every construct that builds code from
 * data, is a failure (the caller then asks, never allows): unbalanced quotes, parentheses
 * or braces, heredocs (`<<`), comments (`#`), arithmetic `$(( ))` / `$[ ]` / `(( ))`,
 * function definitions, brace expansion or a glob pattern in a command name
 * (`{rm,-rf,~}`), and the `${…}` forms listed in shell-hazards.ts (`${x@P}`, `${!x}`,
 * `${x:=…}`, non-numeric subscripts and offsets), nesting deeper than 32, more than
 * 16,384 characters. On failure the commands understood so far are still returned (for
 * deny checks).
 */
export interface ShellCommand {
  /** Words in source form, one space apart; redirections as `>target`. */
  readonly text: string;
  /** The same words with quotes and escapes removed (best effort); substitutions stay as written. */
  readonly words: readonly string[];
  readonly kind: 'simple' | 'compound';
}

export type ShellSplit =
  | { readonly ok: true; readonly commands: readonly ShellCommand[] }
  | { readonly ok: false; readonly error: string; readonly commands: readonly ShellCommand[] };

/** Longer command lines are not split (nor matched against any regex): they ask. */
export const MAX_SHELL_LENGTH = 16_384;
const MAX_DEPTH = 32;

export function splitShell(command: string): ShellSplit {
  const commands: ShellCommand[] = [];
  if (command.length > MAX_SHELL_LENGTH) return { ok: false, error: `command longer than ${MAX_SHELL_LENGTH} characters`, commands };
  try {
    new Parser(command, 0, commands).parseList(null);
    return { ok: true, commands };
  } catch (error) {
    if (error instanceof ShellSyntaxError) return { ok: false, error: error.message, commands };
    throw error;
  }
}

/** Thrown inside the parser only; not an Error, so no stack is captured (cheap on hostile input). */
class ShellSyntaxError {
  constructor(readonly message: string) {}
}

interface Piece {
  raw: string;
  value: string;
  /** The word with every quoted or expanded part replaced by NUL: what bash may brace-expand or glob. */
  bare?: string;
}

const isBlank = (c: string | undefined): boolean => c === ' ' || c === '\t';
/** Characters that end a word (besides blanks). */
const isMeta = (c: string | undefined): boolean => c === '\n' || c === ';' || c === '&' || c === '|' || c === '<' || c === '>' || c === '(' || c === ')';
/** Per ASCII code: 0 for what ends a word or starts a quote, escape or expansion (parseWord reads other characters as they are; codes ≥ 0x80 too). */
const PLAIN_CODES = new Uint8Array(128).fill(1);
for (const c of ' \t\n;&|<>()\\\'"`$') PLAIN_CODES[c.charCodeAt(0)] = 0;
const isPlain = (code: number): boolean => code >= 0x80 || PLAIN_CODES[code] === 1;
const REDIRECT_OPS = ['&>>', '&>', '<<<', '<<-', '<<', '<>', '<&', '>&', '>>', '>|', '<', '>'] as const;

class Parser {
  private i = 0;

  constructor(
    private readonly s: string,
    private depth: number,
    private readonly out: ShellCommand[],
  ) {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
  }

  private fail(message: string): never {
    throw new ShellSyntaxError(message);
  }

  /** Parse commands until `end` (left unconsumed) or the end of input. */
  parseList(end: ')' | '}' | null): void {
    const s = this.s;
    for (;;) {
      this.skipBlanks();
      if (this.i >= s.length) {
        if (end) this.fail(`unclosed "${end === ')' ? '(' : '{'}"`);
        return;
      }
      const c = s[this.i]!;
      if (c === '\n' || c === ';' || c === '|') {
        this.i++;
      } else if (c === '&' && s[this.i + 1] !== '>') {
        this.i++;
      } else if (c === ')') {
        if (end === ')') return;
        this.fail('unexpected ")"');
      } else if (c === '}' && end === '}' && (this.i + 1 >= s.length || isBlank(s[this.i + 1]) || isMeta(s[this.i + 1]))) {
        return;
      } else if (c === '(') {
        if (s[this.i + 1] === '(') this.fail('arithmetic "(( ))" is not supported');
        this.parseCompound('(', ')');
      } else if (c === '{' && (isBlank(s[this.i + 1]) || s[this.i + 1] === '\n')) {
        this.parseCompound('{', '}');
      } else if (c === '#') {
        this.fail('comments are not supported');
      } else {
        this.parseSimple(end);
      }
    }
  }

  /** `( list )` or `{ list; }`, then optional redirections (which make it a command of its own). */
  private parseCompound(open: '(' | '{', close: ')' | '}'): void {
    const start = this.i;
    this.i++;
    this.nested(() => this.parseList(close));
    if (this.s[this.i] !== close) this.fail(`unclosed "${open}"`);
    this.i++;
    const redirects: Piece[] = [];
    for (;;) {
      this.skipBlanks();
      const c = this.s[this.i];
      if (c === undefined || c === '\n' || c === ';' || c === '|' || c === ')' || (c === '&' && this.s[this.i + 1] !== '>')) break;
      if (c === '}' && this.s[this.i + 1] !== '>' && this.s[this.i + 1] !== '<') break;
      if (c === '<' || c === '>' || c === '&' || /\d/.test(c)) {
        let fd = '';
        while (/\d/.test(this.s[this.i] ?? '')) fd += this.s[this.i++];
        if (this.s[this.i] !== '<' && this.s[this.i] !== '>' && this.s[this.i] !== '&') this.fail(`unexpected text after "${close}"`);
        redirects.push(this.parseRedirect(fd));
        continue;
      }
      this.fail(`unexpected text after "${close}"`);
    }
    if (redirects.length > 0) {
      const text = this.s.slice(start, this.i).trim().replace(/\s+/g, ' ');
      this.out.push({ text, words: [text], kind: 'compound' });
    }
  }

  private parseSimple(end: ')' | '}' | null): void {
    const s = this.s;
    const tokens: Piece[] = [];
    for (;;) {
      this.skipBlanks();
      if (this.i >= s.length) break;
      const c = s[this.i]!;
      if (c === '\n' || c === ';' || c === '|') break;
      if (c === '&') {
        if (s[this.i + 1] === '>') {
          tokens.push(this.parseRedirect(''));
          continue;
        }
        break;
      }
      if (c === ')') {
        if (end === ')') break;
        this.fail('unexpected ")"');
      }
      if (c === '(') this.fail('unexpected "(" (function definitions and arrays are not supported)');
      if (c === '#') this.fail('comments are not supported');
      if ((c === '<' || c === '>') && s[this.i + 1] !== '(') {
        tokens.push(this.parseRedirect(''));
        continue;
      }
      const word = this.parseWord();
      const next = s[this.i];
      if ((next === '<' || next === '>') && s[this.i + 1] !== '(' && /^\d+$/.test(word.raw)) {
        tokens.push(this.parseRedirect(word.raw));
        continue;
      }
      tokens.push(word);
    }
    const name = tokens.find((t) => t.bare !== undefined);
    if (name?.bare === 'function') this.fail('function definitions are not supported');
    const hazard = commandWordHazard(tokens.filter((t) => t.bare !== undefined) as Word[]);
    if (hazard) this.fail(hazard);
    if (tokens.length > 0) {
      this.out.push({ text: tokens.map((t) => t.raw).join(' '), words: tokens.map((t) => t.value), kind: 'simple' });
    }
  }

  /** A redirection operator (after an optional fd number) and its target word. */
  private parseRedirect(fd: string): Piece {
    const s = this.s;
    const op = REDIRECT_OPS.find((o) => s.startsWith(o, this.i));
    if (!op) this.fail('bad redirection');
    if (op === '<<' || op === '<<-') this.fail('heredocs are not supported');
    this.i += op.length;
    this.skipBlanks();
    const c = s[this.i];
    if (c === undefined || c === '\n' || c === ';' || c === '|' || c === '&' || c === ')' || ((c === '<' || c === '>') && s[this.i + 1] !== '(')) {
      this.fail(`redirection "${op}" without a target`);
    }
    const target = this.parseWord();
    if (target.raw === '') this.fail(`redirection "${op}" without a target`);
    return { raw: fd + op + target.raw, value: fd + op + target.value };
  }

  private parseWord(): Piece {
    const s = this.s;
    const start = this.i;
    let raw = '';
    let value = '';
    let bare = '';
    while (this.i < s.length) {
      // A run of characters that stand for themselves at once (one slice, not one string per character).
      if (isPlain(s.charCodeAt(this.i))) {
        let end = this.i + 1;
        while (end < s.length && isPlain(s.charCodeAt(end))) end++;
        const run = s.slice(this.i, end);
        raw += run;
        value += run;
        bare += run;
        this.i = end;
        continue;
      }
      const c = s[this.i]!;
      if (isBlank(c) || isMeta(c)) {
        if ((c === '<' || c === '>') && s[this.i + 1] === '(' && this.i === start) {
          const from = this.i;
          this.i += 2;
          this.nested(() => this.parseList(')'));
          this.i++;
          raw += s.slice(from, this.i);
          value += s.slice(from, this.i);
          bare += '\0';
          continue;
        }
        if (c === '(' && this.i === start) this.fail('unexpected "("');
        break;
      }
      if (c === '\\') {
        const n = s[this.i + 1];
        if (n === undefined) {
          raw += c;
          value += c;
          this.i++;
        } else if (n === '\n') {
          this.i += 2;
        } else {
          raw += c + n;
          value += n;
          bare += '\0';
          this.i += 2;
        }
      } else if (c === "'") {
        const close = s.indexOf("'", this.i + 1);
        if (close === -1) this.fail("unclosed '");
        raw += s.slice(this.i, close + 1);
        value += s.slice(this.i + 1, close);
        bare += '\0';
        this.i = close + 1;
      } else if (c === '"') {
        const piece = this.parseDouble();
        raw += piece.raw;
        value += piece.value;
        bare += '\0';
      } else if (c === '`') {
        const text = this.parseBacktick();
        raw += text;
        value += text;
        bare += '\0';
      } else if (c === '$') {
        const piece = this.parseDollar();
        raw += piece.raw;
        value += piece.value;
        bare += '\0';
      } else {
        raw += c;
        value += c;
        bare += c;
        this.i++;
      }
    }
    return { raw, value, bare };
  }

  /** `"…"` starting at the quote; `$(…)`, backticks and `${…}` inside are extracted. */
  private parseDouble(): Piece {
    const s = this.s;
    let raw = '"';
    let value = '';
    this.i++;
    for (;;) {
      if (this.i >= s.length) this.fail('unclosed "');
      const c = s[this.i]!;
      if (c === '"') {
        this.i++;
        return { raw: raw + '"', value };
      }
      if (c === '\\') {
        const n = s[this.i + 1];
        if (n === undefined) this.fail('unclosed "');
        this.i += 2;
        if (n === '\n') continue;
        raw += c + n;
        value += '$`"\\'.includes(n) ? n : c + n;
      } else if (c === '`') {
        const text = this.parseBacktick();
        raw += text;
        value += text;
      } else if (c === '$' && (s[this.i + 1] === '(' || s[this.i + 1] === '{' || s[this.i + 1] === '[')) {
        const piece = this.parseDollar();
        raw += piece.raw;
        value += piece.value;
      } else {
        raw += c;
        value += c;
        this.i++;
      }
    }
  }

  /** `$(…)`, `${…}`, `$'…'`, `$"…"` or a plain `$`. */
  private parseDollar(): Piece {
    const s = this.s;
    const from = this.i;
    const n = s[this.i + 1];
    if (n === '(') {
      if (s[this.i + 2] === '(') this.fail('arithmetic "$(( ))" is not supported');
      this.i += 2;
      this.nested(() => this.parseList(')'));
      this.i++;
      const text = s.slice(from, this.i);
      return { raw: text, value: text };
    }
    if (n === '{') return this.parseBraced();
    if (n === '[') this.failAfterArithmetic();
    if (n === "'") {
      let j = this.i + 2;
      while (j < s.length && s[j] !== "'") j += s[j] === '\\' ? 2 : 1;
      if (j >= s.length) this.fail("unclosed $'");
      const body = s.slice(this.i + 2, j);
      this.i = j + 1;
      return { raw: s.slice(from, this.i), value: decodeAnsiC(body) };
    }
    if (n === '"') {
      this.i++;
      const piece = this.parseDouble();
      return { raw: '$' + piece.raw, value: piece.value };
    }
    this.i++;
    return { raw: '$', value: '$' };
  }

  /**
   * `${…}` with nested braces, quotes and substitutions. Single quotes delimit (bash finds
   * the closing brace that way) but their text is searched for substitutions as well.
   */
  private parseBraced(): Piece {
    const s = this.s;
    const from = this.i;
    this.i += 2;
    let depth = 1;
    while (depth > 0) {
      if (this.i >= s.length) this.fail('unclosed "${"');
      const c = s[this.i]!;
      if (c === '\\') this.i += 2;
      else if (c === "'") {
        const close = s.indexOf("'", this.i + 1);
        if (close === -1) this.fail("unclosed '");
        this.extractFromLiteral(s.slice(this.i + 1, close));
        this.i = close + 1;
      } else if (c === '"') this.parseDouble();
      else if (c === '`') this.parseBacktick();
      else if (c === '$' && (s[this.i + 1] === '(' || s[this.i + 1] === '{' || s[this.i + 1] === '[')) this.parseDollar();
      else if ((c === '<' || c === '>') && s[this.i + 1] === '(') {
        // Unquoted, `${x:-<(cmd)}` runs `cmd` as a process substitution; inside double quotes
        // the same text is a plain word in which `'$(cmd)'` runs. Both readings are reported:
        // the substitution parsed as a command list here, then the text scanned on as usual.
        const sub = new Parser(s, this.depth + 1, this.out);
        sub.i = this.i + 2;
        sub.parseList(')');
        this.i += 2;
      } else {
        if (c === '{') depth++;
        else if (c === '}') depth--;
        this.i++;
      }
    }
    const text = s.slice(from, this.i);
    const hazard = braceHazard(text.slice(2, -1));
    if (hazard) this.fail(hazard);
    return { raw: text, value: text };
  }

  /** `$[…]`: the substitutions inside are extracted (for deny rules), then the command fails. */
  private failAfterArithmetic(): never {
    const s = this.s;
    this.i += 2;
    let depth = 1;
    while (this.i < s.length && depth > 0) {
      const c = s[this.i]!;
      if (c === '\\') this.i += 2;
      else if (c === '`') this.parseBacktick();
      else if (c === '$' && (s[this.i + 1] === '(' || s[this.i + 1] === '{')) this.parseDollar();
      else {
        if (c === '[') depth++;
        else if (c === ']') depth--;
        this.i++;
      }
    }
    this.fail('arithmetic "$[ ]" is not supported');
  }

  /** Extract the substitutions in `text` as bash would inside double quotes (`'` is a plain character). */
  private extractFromLiteral(text: string): void {
    if (!/[`$]/.test(text)) return;
    const inner = new Parser(text, this.depth + 1, this.out);
    inner.scanDoubleQuotedBody();
  }

  /** The body of a double-quoted string without its quotes: every substitution is extracted. */
  private scanDoubleQuotedBody(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s[this.i]!;
      if (c === '\\') this.i += 2;
      else if (c === '`') this.parseBacktick();
      else if (c === '$' && (s[this.i + 1] === '(' || s[this.i + 1] === '{' || s[this.i + 1] === '[')) this.parseDollar();
      else this.i++;
    }
  }

  /** `` `…` ``: the body (with `\``, `\$`, `\\` unescaped) is parsed as a command line of its own. */
  private parseBacktick(): string {
    const s = this.s;
    let j = this.i + 1;
    while (j < s.length && s[j] !== '`') j += s[j] === '\\' ? 2 : 1;
    if (j >= s.length) this.fail('unclosed backtick');
    const body = s.slice(this.i + 1, j).replace(/\\([`$\\])/g, '$1');
    new Parser(body, this.depth + 1, this.out).parseList(null);
    const text = s.slice(this.i, j + 1);
    this.i = j + 1;
    return text;
  }

  private nested(run: () => void): void {
    if (this.depth + 1 > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
    this.depth++;
    try {
      run();
    } finally {
      this.depth--;
    }
  }

  /** Spaces, tabs and line continuations. */
  private skipBlanks(): void {
    const s = this.s;
    while (this.i < s.length) {
      if (isBlank(s[this.i])) this.i++;
      else if (s[this.i] === '\\' && s[this.i + 1] === '\n') this.i += 2;
      else break;
    }
  }
}
