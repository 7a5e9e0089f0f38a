/**
 * Markdown for the web page, safe by construction (docs/remote.md#the-web-page): the text is
 * HTML-escaped FIRST, then a small subset is turned into tags this code writes itself —
 * fenced code blocks, inline code, headings, bullet and numbered lists, **bold**, *italic*,
 * and [links](https://…) to http(s) URLs only. No tag or attribute from the input survives:
 * `<`, `>`, `&`, `"` and `'` are entities before any pattern runs, so a model's output cannot
 * inject markup, and a link's URL cannot leave its quoted attribute.
 */

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** Inline markup over already-escaped text. Code spans are set aside first so nothing inside them is touched. */
function inline(escaped: string): string {
  const spans: string[] = [];
  let out = escaped.replace(/`([^`\n]+)`/g, (_m, code: string) => {
    spans.push(`<code>${code}</code>`);
    return `\u0000${spans.length - 1}\u0000`;
  });
  out = out
    .replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g, (_m, label: string, url: string) => `<a href="${url}" rel="noopener noreferrer nofollow" target="_blank">${label}</a>`)
    .replace(/\*\*([^*\n]+)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[\s(])\*([^*\n]+)\*(?=$|[\s).,;:!?])/g, '$1<em>$2</em>')
    .replace(/(^|[\s(])_([^_\n]+)_(?=$|[\s).,;:!?])/g, '$1<em>$2</em>');
  return out.replace(/\u0000(\d+)\u0000/g, (_m, i: string) => spans[Number(i)]!);
}

type Block = { kind: 'code'; text: string; lang: string } | { kind: 'text'; lines: string[] };

function splitFences(text: string): Block[] {
  const blocks: Block[] = [];
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let current: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const fence = /^\s*```\s*([\w+-]*)\s*$/.exec(lines[i]!);
    if (!fence) {
      current.push(lines[i]!);
      continue;
    }
    const end = lines.findIndex((line, j) => j > i && /^\s*```\s*$/.test(line));
    if (end === -1) {
      current.push(lines[i]!);
      continue;
    }
    if (current.length) blocks.push({ kind: 'text', lines: current });
    current = [];
    blocks.push({ kind: 'code', text: lines.slice(i + 1, end).join('\n'), lang: fence[1] ?? '' });
    i = end;
  }
  if (current.length) blocks.push({ kind: 'text', lines: current });
  return blocks;
}

function textBlock(lines: readonly string[]): string {
  const out: string[] = [];
  let list: { tag: 'ul' | 'ol'; items: string[] } | null = null;
  let paragraph: string[] = [];
  const flushParagraph = (): void => {
    if (paragraph.length) out.push(`<p>${paragraph.map((l) => inline(escapeHtml(l))).join('<br>')}</p>`);
    paragraph = [];
  };
  const flushList = (): void => {
    if (list) out.push(`<${list.tag}>${list.items.map((i) => `<li>${i}</li>`).join('')}</${list.tag}>`);
    list = null;
  };
  for (const line of lines) {
    const heading = /^(#{1,6})\s+(.*)$/.exec(line);
    const bullet = /^\s*[-*+]\s+(.*)$/.exec(line);
    const numbered = /^\s*\d+[.)]\s+(.*)$/.exec(line);
    if (heading) {
      flushParagraph();
      flushList();
      const level = Math.min(6, heading[1]!.length + 2);
      out.push(`<h${level}>${inline(escapeHtml(heading[2]!))}</h${level}>`);
    } else if (bullet || numbered) {
      flushParagraph();
      const tag = bullet ? 'ul' : 'ol';
      if (list && list.tag !== tag) flushList();
      list ??= { tag, items: [] };
      list.items.push(inline(escapeHtml((bullet ?? numbered)![1]!)));
    } else if (line.trim() === '') {
      flushParagraph();
      flushList();
    } else {
      flushList();
      paragraph.push(line);
    }
  }
  flushParagraph();
  flushList();
  return out.join('');
}

/** Markdown → HTML that holds only tags written here (see the module comment). */
export function renderMarkdown(text: string): string {
  return splitFences(text)
    .map((block) => (block.kind === 'code' ? `<pre><code>${escapeHtml(block.text)}</code></pre>` : textBlock(block.lines)))
    .join('');
}
