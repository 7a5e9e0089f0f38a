import { z } from 'zod';

/** Internal content blocks: Anthropic-shaped, camelCase (docs/design.md#message-format). Providers translate at their edge. */
export type TextBlock = { type: 'text'; text: string };
export type ToolUseBlock = { type: 'tool_use'; id: string; name: string; input: unknown };
export type ToolResultBlock = { type: 'tool_result'; toolUseId: string; content: string; isError?: boolean };
export type ContentBlock = TextBlock | ToolUseBlock | ToolResultBlock;
export type Role = 'user' | 'assistant';
export type Message = { role: Role; content: ContentBlock[]; at: string };

export const contentBlockSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().min(1), input: z.unknown() }),
  z.object({
    type: z.literal('tool_result'),
    toolUseId: z.string().min(1),
    content: z.string(),
    isError: z.boolean().optional(),
  }),
]);

/** Schema of a message read back from disk. */
export const messageSchema = z.object({
  role: z.enum(['user', 'assistant']),
  content: z.array(contentBlockSchema),
  at: z.string(),
});

export function textOf(message: Message): string {
  return message.content
    .filter((b): b is TextBlock => b.type === 'text')
    .map((b) => b.text)
    .join('');
}

export function toolUsesOf(message: Message): ToolUseBlock[] {
  return message.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
}

export function toolResultsOf(message: Message): ToolResultBlock[] {
  return message.content.filter((b): b is ToolResultBlock => b.type === 'tool_result');
}
