import { Lexer, type Token, type Tokens } from 'marked';
import type { Line, Span } from '../text/line';
import { EMPTY_LINE } from '../text/line';
import { hardWrap, wrapSpans, widthOf } from '../text/wrap';
import { highlightLines } from './highlight';

/** Characters used for markdown structure; plain mode uses ASCII that screen readers read well. */
export interface MarkdownGlyphs {
  readonly bullet: string;
  readonly quote: string;
  readonly code: string;
  readonly rule: string;
}

export const FANCY_MARKDOWN: MarkdownGlyphs = { bullet: '•', quote: '│ ', code: '│ ', rule: '─' };
export const PLAIN_MARKDOWN: MarkdownGlyphs = { bullet: '-', quote: '> ', code: '    ', rule: '-' };

type Style = Omit<Span, 'text'>;

/**
 * Render markdown into pre-wrapped lines of at most `width` cells through marked's lexer:
 * headings, paragraphs, lists (nested, numbered, tasks), fenced code with highlighting,
 * inline code, emphasis, links, quotes, rules and tables (as aligned text).
 */
export function markdownLines(text: string, width: number, glyphs: MarkdownGlyphs = FANCY_MARKDOWN): Line[] {
  let tokens: Token[];
  try {
    tokens = new Lexer({ gfm: true }).lex(text);
  } catch {
    return wrapSpans([{ text }], width);
  }
  const out: Line[] = [];
  blocks(tokens, Math.max(4, width), glyphs, out, [], []);
  while (out.length > 0 && out[out.length - 1]!.length === 0) out.pop();
  return out;
}

/**
 * The styled spans of `text` when it lexes as exactly one paragraph (what `markdownLines`
 * wraps for it), else null. For incremental rendering of a streamed paragraph (lanes/paragraph-tail.ts).
 */
export function paragraphSpans(text: string): Span[] | null {
  let tokens: Token[];
  try {
    tokens = new Lexer({ gfm: true }).lex(text);
  } catch {
    return null;
  }
  const t = tokens.length === 1 ? tokens[0]! : null;
  if (!t || t.type !== 'paragraph') return null;
  const p = t as Tokens.Paragraph;
  return p.tokens ? inline(p.tokens, {}) : [{ text: p.text }];
}

function blocks(tokens: readonly Token[], width: number, g: MarkdownGlyphs, out: Line[], first: Span[], rest: Span[]): void {
  let lead = first;
  const take = (): Span[] => { const l = lead; lead = rest; return l; };
  for (const token of tokens) {
    switch (token.type) {
      case 'space':
        if (out.length > 0 && out[out.length - 1]!.some((s) => s.text.trim() !== '')) out.push(EMPTY_LINE);
        break;
      case 'heading': {
        const t = token as Tokens.Heading;
        out.push(...wrapSpans(inline(t.tokens, { bold: true, tone: 'heading', underline: t.depth === 1 }), width, { first: take(), rest }));
        break;
      }
      case 'paragraph':
      case 'text': {
        const t = token as Tokens.Paragraph | Tokens.Text;
        const spans = 'tokens' in t && t.tokens ? inline(t.tokens, {}) : [{ text: t.text }];
        out.push(...wrapSpans(spans, width, { first: take(), rest }));
        break;
      }
      case 'code': {
        const t = token as Tokens.Code;
        const bar: Span = { text: g.code, tone: 'muted' };
        const lang = (t.lang ?? '').trim().split(/\s+/)[0]!.toLowerCase();
        const prefixFirst = take();
        highlightLines(t.text, ALIASES[lang] ?? lang).forEach((spans, i) => {
          const pre = [...(i === 0 ? prefixFirst : rest), bar];
          const room = Math.max(1, width - widthOf(pre));
          const joined = spans.map((s) => s.text).join('');
          const pieces = widthOf(spans) <= room ? [spans] : hardWrap(joined, room, { tone: 'code' });
          for (const piece of pieces) out.push([...pre, ...piece]);
        });
        break;
      }
      case 'list': {
        const t = token as Tokens.List;
        t.items.forEach((item, i) => {
          const marker = t.ordered ? `${Number(t.start || 1) + i}. ` : `${g.bullet} `;
          const task = item.task ? (item.checked ? '[x] ' : '[ ] ') : '';
          const head: Span[] = [...(i === 0 ? take() : rest), { text: marker + task, tone: 'accent' }];
          const hang: Span[] = [...rest, { text: ' '.repeat(marker.length + task.length) }];
          blocks(item.tokens.filter((x) => x.type !== 'checkbox'), width, g, out, head, hang);
        });
        break;
      }
      case 'blockquote': {
        const t = token as Tokens.Blockquote;
        const bar: Span = { text: g.quote, tone: 'muted' };
        blocks(t.tokens, width, g, out, [...take(), bar], [...rest, bar]);
        break;
      }
      case 'hr':
        out.push([...take(), { text: g.rule.repeat(Math.max(1, width - widthOf(rest))), tone: 'muted' }]);
        break;
      case 'table': {
        const t = token as Tokens.Table;
        const rows = [t.header.map((c) => c.text), ...t.rows.map((r) => r.map((c) => c.text))];
        const cols = t.header.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
        rows.forEach((r, i) => {
          const text = r.map((cell, c) => cell.padEnd(cols[c]!)).join('  ');
          out.push(...wrapSpans([{ text, bold: i === 0 }], width, { first: take(), rest }));
        });
        break;
      }
      case 'html':
      case 'def':
      default: {
        const raw = (token as { raw?: string }).raw ?? '';
        if (raw.trim() !== '') out.push(...wrapSpans([{ text: raw.replace(/\n+$/, '') }], width, { first: take(), rest }));
      }
    }
  }
}

function inline(tokens: readonly Token[] | undefined, style: Style): Span[] {
  const out: Span[] = [];
  for (const token of tokens ?? []) {
    switch (token.type) {
      case 'strong': out.push(...inline((token as Tokens.Strong).tokens, { ...style, bold: true })); break;
      case 'em': out.push(...inline((token as Tokens.Em).tokens, { ...style, italic: true })); break;
      case 'del': out.push(...inline((token as Tokens.Del).tokens, { ...style, strike: true })); break;
      case 'codespan': out.push({ ...style, text: (token as Tokens.Codespan).text.replace(/&[a-z#0-9]+;/g, decodeEntity), tone: 'code' }); break;
      case 'br': out.push({ text: '\n' }); break;
      case 'link': {
        const t = token as Tokens.Link;
        out.push(...inline(t.tokens, { ...style, tone: 'link', underline: true }));
        if (t.text !== t.href && !t.href.startsWith('mailto:')) out.push({ ...style, text: ` (${t.href})`, tone: 'muted' });
        break;
      }
      case 'text':
      case 'escape': {
        const t = token as Tokens.Text;
        if (t.tokens && t.tokens.length > 0) out.push(...inline(t.tokens, style));
        // A line break inside a paragraph is a soft break (a space); `br` tokens are hard ones.
        else out.push({ ...style, text: t.text.replace(/&[a-z#0-9]+;/g, decodeEntity).replace(/\n/g, ' ') });
        break;
      }
      default: out.push({ ...style, text: (token as { raw?: string }).raw ?? '' });
    }
  }
  return out;
}

const ALIASES: Readonly<Record<string, string>> = {
  js: 'javascript', jsx: 'javascript', mjs: 'javascript', ts: 'typescript', tsx: 'typescript', sh: 'bash', shell: 'bash',
  zsh: 'bash', console: 'bash', py: 'python', rs: 'rust', yml: 'yaml', html: 'xml', md: 'markdown', 'c++': 'cpp', patch: 'diff',
};

const ENTITY: Readonly<Record<string, string>> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };
function decodeEntity(e: string): string {
  return ENTITY[e] ?? e;
}
