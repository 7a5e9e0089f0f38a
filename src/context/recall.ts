import type { Message } from '../model/message';

/**
 * `recall` (docs/context.md): search a session's full history, compacted parts included, and
 * return excerpts with message numbers; or show one message whole. Pure: the tool (recall-tool.ts)
 * passes the history in.
 */
export interface RecallHit {
  readonly index: number;
  readonly role: Message['role'];
  readonly excerpt: string;
}

const EXCERPT_RADIUS = 160;
/** Characters of one message `recall` shows at a time (`message` + `offset` pages through longer ones). */
export const MESSAGE_PAGE = 6000;

/** The searchable text of a message: its text, tool calls (name and input) and results, as the model saw them. */
export function messageText(message: Message): string {
  return message.content
    .map((b) => {
      switch (b.type) {
        case 'text':
          return b.text;
        case 'tool_use':
          return `[tool call ${b.name} ${JSON.stringify(b.input ?? {})}]`;
        case 'tool_result':
          return `[tool result${b.isError ? ' (error)' : ''}]\n${b.content}`;
      }
    })
    .join('\n');
}

function excerptAround(text: string, at: number, length: number): string {
  const start = Math.max(0, at - EXCERPT_RADIUS);
  const end = Math.min(text.length, at + length + EXCERPT_RADIUS);
  const body = text.slice(start, end).replace(/\s+/g, ' ').trim();
  return `${start > 0 ? '…' : ''}${body}${end < text.length ? '…' : ''}`;
}

/**
 * Messages containing every word of `query` (case-insensitive), newest first, up to `limit`;
 * each hit shows the text around the first occurrence of the rarest-looking (longest) word.
 * `total` counts every matching message.
 */
export function searchHistory(messages: readonly Message[], query: string, limit: number): { hits: RecallHit[]; total: number } {
  const words = query.toLowerCase().split(/\s+/).filter((w) => w !== '');
  if (words.length === 0) return { hits: [], total: 0 };
  const anchor = [...words].sort((a, b) => b.length - a.length)[0]!;
  const hits: RecallHit[] = [];
  let total = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const text = messageText(messages[i]!);
    const lower = text.toLowerCase();
    if (!words.every((w) => lower.includes(w))) continue;
    total++;
    if (hits.length < limit) hits.push({ index: i, role: messages[i]!.role, excerpt: excerptAround(text, lower.indexOf(anchor), anchor.length) });
  }
  return { hits, total };
}

/** One message's text from `offset`, at most `MESSAGE_PAGE` characters, and where the next page starts (null: none). */
export function messagePage(message: Message, offset: number): { text: string; next: number | null; length: number } {
  const text = messageText(message);
  const start = Math.max(0, Math.min(offset, text.length));
  const end = Math.min(text.length, start + MESSAGE_PAGE);
  return { text: text.slice(start, end), next: end < text.length ? end : null, length: text.length };
}
