import { withoutHereDocuments } from './shell-heredoc';

/**
 * For deny and ask rules only: a line the splitter refuses (it asks) rewritten into lines it can
 * split, so that the commands it would run are still seen by a deny — an ask can be granted, by
 * an agent approver too; a deny cannot. Each rewrite keeps every command bash would run and may
 * add harmless ones (deny rules then see more views, never fewer); allow rules never see the
 * result. Two rewrites, both seen: here-documents read first (a `#` in a body is data, and
 * `$(…)` after it still runs), and comments dropped first (`echo x # <<EOF` opens no
 * here-document, so the next line is a command). Empty when nothing was rewritten.
 *   - here-documents become quoted here-strings holding their bodies (shell-heredoc.ts);
 *   - comments go (`true # x` then a new line `curl …`);
 *   - arithmetic `$((…))` and `((…))` become a subshell inside a substitution, `$( (…))` and
 *     `( (…))`: substitutions inside (`$(( $(curl …) ))`, which bash runs) are then found;
 *   - a function definition's name goes, leaving its body a group or subshell
 *     (`f() { curl …; }; f`);
 *   - and, seen as a third line, parentheses that open no subshell nor substitution — a case
 *     pattern's `(a)`, a `[[ x =~ (a|b) ]]` group, extglob `!(…)`, an array `a=(…)` — and the
 *     case separators `;;`, `;&`, `;;&` become line breaks (shell-refused.ts#withoutBareParentheses):
 *     `case a in a) curl …;; esac`, `[[ a =~ (b) ]] && curl …`, `a=($(curl …))`.
 */
export function refusedLinesForDeny(line: string): string[] {
  const documentedFirst = withoutFunctionNames(withoutCommentsAndArithmetic(withoutHereDocuments(line) ?? line));
  const uncommented = withoutCommentsAndArithmetic(line);
  const commentsFirst = withoutFunctionNames(withoutHereDocuments(uncommented) ?? uncommented);
  const out: string[] = [];
  for (const rewritten of [documentedFirst, commentsFirst, withoutBareParentheses(commentsFirst)]) if (rewritten !== line && !out.includes(rewritten)) out.push(rewritten);
  return out;
}

/**
 * One pass with bash's quoting (quoted text is copied as it is): a `(` opening a subshell (at the
 * start of a command: after a separator, a line break, another `(`, `{` or a keyword such as `if`,
 * and not written against a word) or a substitution (`$(`, `<(`, `>(`) stays with its `)`. Any other `(`, and `;;`, `;&`, `;;&`,
 * become a line break and `:` (what follows — a case pattern — is an argument, never a command
 * name); such a `(`'s `)`, or a `)` matching nothing (a case pattern's), a line break. A
 * separator left at the start of a line goes (`!(x); curl …`). Linear: one look back per `(`.
 */
function withoutBareParentheses(line: string): string {
  let out = '';
  let quote: "'" | '"' | null = null;
  /** Per open parenthesis: kept (subshell or substitution) or not. */
  const kept: boolean[] = [];
  let lineStart = true;
  /** The last character written that is not a blank; the word being written; the word before the blanks since. */
  let last = '';
  let word = '';
  let previousWord = '';
  const put = (text: string, isWord: boolean) => {
    out += text;
    last = text[text.length - 1]!;
    word = isWord ? word + text : '';
    if (!isWord) previousWord = '';
  };
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote !== null) {
      let text = c;
      if (c === '\\' && quote === '"') text += line[++i] ?? '';
      else if (c === quote) quote = null;
      put(text, true);
      continue;
    }
    if (c === ' ' || c === '\t') {
      out += c;
      if (word !== '') previousWord = word;
      word = '';
      continue;
    }
    if (c === '\n') {
      put(c, false);
      lineStart = true;
      continue;
    }
    if (lineStart && (c === ';' || c === '&' || c === '|')) continue;
    if (c === ';' && (line[i + 1] === ';' || line[i + 1] === '&')) {
      i += line[i + 1] === ';' && line[i + 2] === '&' ? 2 : 1;
      put('\n: ', false);
      lineStart = false;
      continue;
    }
    const wasLineStart = lineStart;
    lineStart = false;
    if (c === '\\') {
      put(line.slice(i, i + 2), true);
      i++;
    } else if (c === "'" || c === '"') {
      quote = c;
      put(c, true);
    } else if (c === '(') {
      // Written right after a word (`!(`, `a=(`, `@(`), a `(` is part of it, unless it opens a substitution.
      const adjacent = word !== '';
      const substitution = adjacent && (last === '$' || last === '<' || last === '>');
      const subshell = !adjacent && (wasLineStart || last === '' || '\n(;&|{'.includes(last) || SUBSHELL_AFTER.has(previousWord));
      if (substitution || subshell) {
        kept.push(true);
        put(c, false);
      } else {
        kept.push(false);
        put('\n: ', false);
      }
    } else if (c === ')') {
      if (kept.pop() === true) {
        put(c, false);
      } else {
        put('\n', false);
        lineStart = true;
      }
    } else {
      put(c, !(c === ';' || c === '&' || c === '|' || c === '<' || c === '>'));
    }
  }
  return out;
}

/** Keywords after which a `(` opens a subshell. */
const SUBSHELL_AFTER = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', 'time', 'coproc']);

/**
 * One pass over the line with bash's quoting (single quotes literal, double quotes with `\`
 * escapes, backslash outside quotes): an unquoted `#` starting a word drops the rest of its
 * line; `((` outside single quotes becomes `( (`.
 */
function withoutCommentsAndArithmetic(line: string): string {
  let out = '';
  let quote: "'" | '"' | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote === "'") {
      out += c;
      if (c === "'") quote = null;
      continue;
    }
    if (c === '\\') {
      out += line.slice(i, i + 2);
      i++;
      continue;
    }
    if (c === '(' && line[i + 1] === '(') {
      out += '( ';
      continue;
    }
    if (quote === '"') {
      out += c;
      if (c === '"') quote = null;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '#' && (i === 0 || WORD_START.test(line[i - 1]!))) {
      const end = line.indexOf('\n', i);
      if (end < 0) break;
      i = end - 1;
      continue;
    }
    out += c;
  }
  return out;
}

/** Characters after which a `#` starts a word (hence a comment). */
const WORD_START = /[\s;&|()<>]/;

/** `name() {`, `name () (`, `function name {`, `function name() {` without the name: the body stays. */
function withoutFunctionNames(line: string): string {
  return line
    .replace(/\bfunction[ \t]+[^\s(){};&|<>]+[ \t]*(?:\([ \t]*\))?/g, ' ')
    .replace(/(^|[\s;&|(])[^\s(){};&|<>'"$`]+[ \t]*\([ \t]*\)/g, '$1 ');
}
