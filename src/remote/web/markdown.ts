import { Lexer, type Token, type Tokens } from 'marked';

/**
 * Markdown for the web page, safe by construction (docs/remote.md#the-web-page): the text is
 * read by marked's lexer (the grammar the TUI renders, components/markdown/), and its tokens are
 * written out as HTML by this code alone, from an allow-list: paragraphs, line breaks, headings,
 * lists, block quotes, rules, code (fenced and inline), strong, em, del, and links to http(s)
 * URLs. Every piece of text (an HTML tag in the input included) is HTML-escaped as it is
 * written, so a model's output cannot inject markup (HTML in the input shows as text), and a
 * link's URL cannot leave its quoted attribute. A token of any other kind is shown as its escaped source.
 */

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/** The TUI's grammar (gfm); a line break in a paragraph is kept (a chat message's lines). */
const OPTIONS = { gfm: true, breaks: true } as const;

const SAFE_URL = /^https?:\/\/[^\s]+$/i;

function inline(tokens: readonly Token[] | undefined): string {
  return (tokens ?? []).map(inlineToken).join('');
}

function inlineToken(token: Token): string {
  switch (token.type) {
    case 'text':
      return 'tokens' in token && token.tokens ? inline(token.tokens) : escapeHtml((token as Tokens.Text).text);
    case 'escape':
      return escapeHtml((token as Tokens.Escape).text);
    case 'strong':
      return `<strong>${inline((token as Tokens.Strong).tokens)}</strong>`;
    case 'em':
      return `<em>${inline((token as Tokens.Em).tokens)}</em>`;
    case 'del':
      return `<del>${inline((token as Tokens.Del).tokens)}</del>`;
    case 'codespan':
      return `<code>${escapeHtml((token as Tokens.Codespan).text)}</code>`;
    case 'br':
      return '<br>';
    case 'link': {
      const link = token as Tokens.Link;
      if (!SAFE_URL.test(link.href)) return escapeHtml(link.raw);
      return `<a href="${escapeHtml(link.href)}" rel="noopener noreferrer nofollow" target="_blank">${inline(link.tokens)}</a>`;
    }
    case 'image':
      // Never fetched from the page: its description only.
      return escapeHtml((token as Tokens.Image).text);
    default:
      return escapeHtml(token.raw);
  }
}

function block(token: Token): string {
  switch (token.type) {
    case 'space':
    case 'def':
      return '';
    case 'paragraph':
      return `<p>${inline((token as Tokens.Paragraph).tokens)}</p>`;
    case 'text': {
      // A tight list item's text, or loose text.
      const text = token as Tokens.Text;
      return text.tokens ? inline(text.tokens) : escapeHtml(text.text);
    }
    case 'heading': {
      const heading = token as Tokens.Heading;
      const level = Math.min(6, heading.depth + 2);
      return `<h${level}>${inline(heading.tokens)}</h${level}>`;
    }
    case 'code':
      return `<pre><code>${escapeHtml((token as Tokens.Code).text)}</code></pre>`;
    case 'hr':
      return '<hr>';
    case 'blockquote':
      return `<blockquote>${blocks((token as Tokens.Blockquote).tokens)}</blockquote>`;
    case 'list': {
      const list = token as Tokens.List;
      const tag = list.ordered ? 'ol' : 'ul';
      return `<${tag}>${list.items.map((item) => `<li>${blocks(item.tokens)}</li>`).join('')}</${tag}>`;
    }
    case 'html':
      // Shown as text; the markdown inside it still renders (an inline read of its source).
      return `<p>${inline(Lexer.lexInline(token.raw.replace(/\n+$/, ''), OPTIONS))}</p>`;
    case 'checkbox':
      return (token as Tokens.Checkbox).checked ? '[x] ' : '[ ] ';
    default:
      // A table and whatever else: the source, as text.
      return `<p>${escapeHtml(token.raw.replace(/\n+$/, '')).replace(/\n/g, '<br>')}</p>`;
  }
}

function blocks(tokens: readonly Token[]): string {
  return tokens.map(block).join('');
}

/** Markdown → HTML that holds only tags written here (see the module comment). */
export function renderMarkdown(text: string): string {
  return blocks(new Lexer(OPTIONS).lex(text));
}
