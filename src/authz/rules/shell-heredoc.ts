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
    const opened = [...head.matchAll(HEREDOC)];
    // Each here-document's body follows the line that opened it, in order.
    let rewritten = '';
    let from = 0;
    for (const match of opened) {
      const [whole, dash, quote, word] = match as unknown as [string, string, string, string];
      const body: string[] = [];
      while (i + 1 < lines.length) {
        const raw = lines[++i]!;
        const text = dash === '-' ? raw.replace(/^\t+/, '') : raw;
        if (text === word) break;
        body.push(text);
      }
      rewritten += `${head.slice(from, match.index)}<<<${quoted(body.length > 0 ? `${body.join('\n')}\n` : '', quote !== '')}`;
      from = match.index! + whole.length;
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

/** `<<WORD`, `<<-WORD`, `<< 'WORD'`, `<<"WORD"` (not `<<<`). */
const HEREDOC = /(?<!<)<<(?!<)(-?)[ \t]*(['"]?)([A-Za-z0-9_.-]+)\2/g;
