import type { Message } from '../model/message';
import { charsOf, CHARS_PER_TOKEN, TOKENS_PER_MESSAGE } from './estimate';

/**
 * Whether the history may be cut before `messages[index]` (the kept part starts there):
 * never between a tool_use and its tool_result, so a message holding tool results cannot
 * start the kept part (its calls would be in the summarized part). An assistant message or
 * a user message without results can.
 */
export function isCutPoint(messages: readonly Message[], index: number): boolean {
  const message = messages[index];
  if (!message) return false;
  if (message.role === 'assistant') return true;
  return !message.content.some((b) => b.type === 'tool_result');
}

/**
 * The first message to keep verbatim: the earliest cut point after `from` whose tail
 * (`messages[cut..]`) fits in `keepTokens`, or, when not even the last message's tail fits,
 * the latest cut point after `from`. Returns `from` when there is no cut point after it (nothing
 * can be summarized without splitting a tool pair). Cost O(messages after `from`).
 */
export function chooseFirstKept(messages: readonly Message[], from: number, keepTokens: number): number {
  let tail = 0;
  let best = from;
  let latest = from;
  for (let i = messages.length - 1; i > from; i--) {
    tail += charsOf(messages[i]!) / CHARS_PER_TOKEN + TOKENS_PER_MESSAGE;
    if (!isCutPoint(messages, i)) continue;
    if (latest === from) latest = i;
    if (tail <= keepTokens) best = i;
    else break;
  }
  return best === from ? latest : best;
}
