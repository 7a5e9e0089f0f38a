/**
 * For deny and ask rules only: a line with here-documents, which the splitter refuses (so the
 * line asks), rewritten so the commands around them and in them can be split: each
 * `<<WORD` / `<<-'WORD'` and its body lines (up to the delimiter line) become one here-string
 * holding the body, quoted as bash reads it: an unquoted delimiter's body in double quotes (bash
 * expands `$(…)`, backticks and `${…}` in it, for any command, `cat` too), a quoted delimiter's
 * in single quotes (literal). So `<<EOF curl http://evil…` shows `curl …` to a deny, the
 * splitter finds `$(curl …)` in `cat <<EOF` bodies, and a shell reading the body as its script
 * (`bash <<EOF`, shell-views.ts) has it seen as commands. Null when the line has no
 * here-document.
 */
export function withoutHereDocuments(line: string): string | null {
  if (!/<<(?!<)/.test(line)) return null;
  const lines = line.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const head = lines[i]!;
    // Each here-document's body follows the line that opened it, in order.
    let rewritten = '';
    let from = 0;
    for (const match of head.matchAll(HEREDOC)) {
      if (match.index! < from) continue; // inside the previous delimiter word (`<<'a<<b'`)
      const delimiter = delimiterAt(head, match.index! + match[0].length);
      if (!delimiter) continue;
      const body: string[] = [];
      while (i + 1 < lines.length) {
        const raw = lines[++i]!;
        const text = match[1] === '-' ? raw.replace(/^\t+/, '') : raw;
        if (text === delimiter.word) break;
        body.push(text);
      }
      rewritten += `${head.slice(from, match.index)}<<<${quoted(body.length > 0 ? `${body.join('\n')}\n` : '', delimiter.quoted)}`;
      from = delimiter.end;
    }
    out.push(rewritten + head.slice(from));
  }
  const result = out.join('\n');
  return result === line ? null : result;
}

/**
 * A here-document's body as the word bash reads it: a quoted delimiter's literal, in single
 * quotes; else in double quotes, where a backslash still escapes only `$`, a backtick, `\` and
 * a newline (a `"`, alone or after a backslash, is an ordinary character of the body).
 */
function quoted(body: string, literal: boolean): string {
  if (literal) return `'${body.replace(/'/g, "'\\''")}'`;
  return `"${body.replace(/\\[\s\S]|"/g, (m) => (m === '"' ? '\\"' : m === '\\"' ? '\\\\\\"' : m))}"`;
}

/** `<<` or `<<-` and the blanks before the delimiter word (not `<<<`). */
const HEREDOC = /(?<!<)<<(?!<)(-?)[ \t]*/g;

/**
 * The delimiter word starting at `at` as bash reads it: up to a metacharacter outside quotes,
 * quotes and backslashes removed (`EOF`, `'EOF'`, `\EOF`, `E"O"F`, `@`, `'a b'`); `quoted` when
 * any part was quoted (the body is then literal). Null when there is no word or a quote is open.
 */
function delimiterAt(line: string, at: number): { word: string; quoted: boolean; end: number } | null {
  let word = '';
  let quotedWord = false;
  let j = at;
  for (; j < line.length; j++) {
    const c = line[j]!;
    if (' \t|&;()<>'.includes(c)) break; // bash's metacharacters (a carriage return is not one)
    if (c === '\\') {
      if (j + 1 >= line.length) return null;
      word += line[++j];
      quotedWord = true;
    } else if (c === "'" || c === '"') {
      const close = line.indexOf(c, j + 1);
      if (close === -1) return null;
      word += line.slice(j + 1, close);
      quotedWord = true;
      j = close;
    } else {
      word += c;
    }
  }
  return j === at ? null : { word, quoted: quotedWord, end: j };
}
