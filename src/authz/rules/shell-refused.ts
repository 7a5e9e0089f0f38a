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
 *     (`f() { curl …; }; f`).
 */
export function refusedLinesForDeny(line: string): string[] {
  const documentedFirst = withoutFunctionNames(withoutCommentsAndArithmetic(withoutHereDocuments(line) ?? line));
  const uncommented = withoutCommentsAndArithmetic(line);
  const commentsFirst = withoutFunctionNames(withoutHereDocuments(uncommented) ?? uncommented);
  const out: string[] = [];
  for (const rewritten of [documentedFirst, commentsFirst]) if (rewritten !== line && !out.includes(rewritten)) out.push(rewritten);
  return out;
}

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
