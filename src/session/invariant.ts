import type { Message } from '../model/message';

/**
 * Thrown by `SessionHandle.append` when a message would break the history invariant (docs/design.md#message-format).
 * A programming error: the runtime must never attempt it, so it is not a LegionError.
 */
export class SessionInvariantError extends Error {
  constructor(readonly sessionId: string, detail: string) {
    super(`${sessionId}: refused to append: ${detail}`);
    this.name = 'SessionInvariantError';
  }
}

/**
 * Why appending `next` after `previous` would break the invariant, or `null` when it may be
 * appended. The rule: each `tool_use` is answered by exactly one `tool_result` in the next
 * message. So after an assistant message with tool_uses, the next message is a user message
 * answering every one of them exactly once (it may add text after the results); a
 * `tool_result` anywhere else, a result for an unknown id, a duplicate, a `tool_use` in a
 * user message or a `tool_result` in an assistant message is refused.
 */
export function appendProblem(previous: Message | undefined, next: Message): string | null {
  if (next.role !== 'user' && next.role !== 'assistant') return `unknown role "${String(next.role)}"`;
  if (!Array.isArray(next.content)) return 'content is not an array';
  if (typeof next.at !== 'string') return '"at" is not a string';
  const open = new Set<string>();
  if (previous && previous.role === 'assistant') {
    for (const b of previous.content) if (b.type === 'tool_use') open.add(b.id);
  }
  const ids = new Set<string>();
  for (const b of next.content) {
    const shape = blockShapeProblem(b);
    if (shape) return shape;
    if (b.type === 'tool_use') {
      if (next.role !== 'assistant') return `a tool_use (${b.id}) in a ${next.role} message`;
      if (ids.has(b.id)) return `tool_use id ${b.id} appears twice`;
      ids.add(b.id);
    } else if (b.type === 'tool_result') {
      if (next.role !== 'user') return `a tool_result (${b.toolUseId}) in an ${next.role} message`;
      if (!open.has(b.toolUseId)) return `tool_result ${b.toolUseId} answers no tool_use of the previous message`;
      if (ids.has(b.toolUseId)) return `tool_use ${b.toolUseId} is answered twice`;
      ids.add(b.toolUseId);
    }
  }
  if (open.size > 0) {
    const missing = [...open].filter((id) => !ids.has(id));
    if (missing.length > 0) {
      return next.role === 'assistant'
        ? `an assistant message after unanswered tool_use ${missing.join(', ')}`
        : `the message after tool_use ${missing.join(', ')} must answer each of them`;
    }
  }
  return null;
}

/** What would make the block fail `messageSchema` when read back, or `null`. */
function blockShapeProblem(block: unknown): string | null {
  if (typeof block !== 'object' || block === null) return 'a content block that is not an object';
  const b = block as Record<string, unknown>;
  const nonEmpty = (v: unknown): boolean => typeof v === 'string' && v.length > 0;
  switch (b.type) {
    case 'text':
      return typeof b.text === 'string' ? null : 'a text block without a string "text"';
    case 'tool_use':
      return nonEmpty(b.id) && nonEmpty(b.name) ? null : 'a tool_use without a non-empty "id" and "name"';
    case 'tool_result':
      if (!nonEmpty(b.toolUseId) || typeof b.content !== 'string') return 'a tool_result without a non-empty "toolUseId" and a string "content"';
      return b.isError === undefined || typeof b.isError === 'boolean' ? null : 'a tool_result whose "isError" is not a boolean';
    default:
      return `a content block of unknown type "${String(b.type)}"`;
  }
}
