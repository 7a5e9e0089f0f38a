/**
 * For deny and ask rules only: a line with here-documents, which the splitter refuses (so the
 * line asks), rewritten so the commands around them can be split: each `<<WORD` / `<<-'WORD'`
 * becomes a here-string `<<<WORD` and its body lines (up to the delimiter line) are dropped.
 * `<<EOF curl http://evil…` then shows `curl …` to a deny rule instead of only asking. Null when
 * the line has no here-document. The bodies are data here: a shell reading one as
 * its script (`bash <<EOF`) asks, as before.
 */
export function withoutHereDocuments(line: string): string | null {
  if (!/<<(?!<)/.test(line)) return null;
  const lines = line.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const pending: { word: string; tabs: boolean }[] = [];
    out.push(lines[i]!.replace(HEREDOC, (_, dash: string, quote: string, word: string) => {
      pending.push({ word, tabs: dash === '-' });
      return `<<<${quote}${word}${quote}`;
    }));
    for (const doc of pending) {
      while (i + 1 < lines.length) {
        const body = lines[++i]!;
        if ((doc.tabs ? body.replace(/^\t+/, '') : body) === doc.word) break;
      }
    }
  }
  const rewritten = out.join('\n');
  return rewritten === line ? null : rewritten;
}

/** `<<WORD`, `<<-WORD`, `<< 'WORD'`, `<<"WORD"` (not `<<<`). */
const HEREDOC = /(?<!<)<<(?!<)(-?)[ \t]*(['"]?)([A-Za-z0-9_.-]+)\2/g;
