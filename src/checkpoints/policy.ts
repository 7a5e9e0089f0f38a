import type { Message } from '../model/message';

/** The responder's turn number in a session: how many prompts (initiator text messages) it has had. */
export function turnNumber(messages: readonly Message[]): number {
  let turns = 0;
  for (const message of messages) {
    if (message.role !== 'user') continue;
    if (message.content.some((b) => b.type === 'tool_result')) continue;
    if (message.content.some((b) => b.type === 'text')) turns++;
  }
  return turns;
}
