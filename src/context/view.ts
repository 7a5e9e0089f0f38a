import type { Message, ToolResultBlock } from '../model/message';
import type { ContextState } from './records';

/** The stub an evicted tool result is sent as (docs/context.md). */
export function evictionStub(toolName: string, chars: number, messageIndex: number): string {
  const size = chars >= 1024 ? `${(chars / 1024).toFixed(1)} kB` : `${chars} characters`;
  return `[evicted: ${size} of ${toolName} output (message ${messageIndex}); use recall or run it again]`;
}

/** The message a summary is sent as, in place of the messages before `firstKept`. */
export function summaryMessage(summary: string, firstKept: number, at: string): Message {
  const text =
    `[Context summary: messages 0–${firstKept - 1} of this session were compacted into the summary below. ` +
    `Nothing was lost: the full history is on disk, and the recall tool searches it (quote its message numbers).]\n\n${summary}`;
  return { role: 'user', content: [{ type: 'text', text }], at };
}

const stubbed = new WeakMap<Message, { over: number; message: Message }>();

/** `message` with its long tool results as stubs (cached per message object and threshold). */
export function evictMessage(message: Message, previous: Message | undefined, index: number, over: number): Message {
  if (message.role !== 'user' || !message.content.some((b) => b.type === 'tool_result' && b.content.length > over)) return message;
  const cached = stubbed.get(message);
  if (cached && cached.over === over) return cached.message;
  const names = new Map<string, string>();
  for (const b of previous?.content ?? []) if (b.type === 'tool_use') names.set(b.id, b.name);
  const content = message.content.map((b) => {
    if (b.type !== 'tool_result' || b.content.length <= over) return b;
    const stub: ToolResultBlock = { ...b, content: evictionStub(names.get(b.toolUseId) ?? 'tool', b.content.length, index) };
    return stub;
  });
  const out: Message = { ...message, content };
  stubbed.set(message, { over, message: out });
  return out;
}

/**
 * What the model is sent of a session (before `sanitizeForProvider`): the latest summary,
 * then the messages from `firstKept` on, tool results before `evictBefore` stubbed when
 * longer than `over` characters. The history itself is never changed.
 */
export function requestView(messages: readonly Message[], state: ContextState, over: number): Message[] {
  const out: Message[] = [];
  if (state.summary !== null && state.firstKept > 0) out.push(summaryMessage(state.summary, state.firstKept, messages[state.firstKept - 1]?.at ?? ''));
  for (let i = state.firstKept; i < messages.length; i++) {
    const m = messages[i]!;
    out.push(i < state.evictBefore ? evictMessage(m, messages[i - 1], i, over) : m);
  }
  return out;
}
