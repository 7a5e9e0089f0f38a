import { messageSchema, type Message } from '../model/message';

export type MessageCheck = { ok: true; value: Message } | { ok: false; error: string };

const MESSAGE_KEYS = new Set(['role', 'content', 'at']);
const TEXT_KEYS = new Set(['type', 'text']);
const TOOL_USE_KEYS = new Set(['type', 'id', 'name', 'input']);
const TOOL_RESULT_KEYS = new Set(['type', 'toolUseId', 'content', 'isError']);

function onlyKeys(value: object, allowed: ReadonlySet<string>): boolean {
  for (const key in value) if (!allowed.has(key)) return false;
  return true;
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}

/**
 * A fast structural check of a message read back from disk. It accepts only what
 * `messageSchema` accepts unchanged (no unknown keys to strip), so passing it means the
 * zod parse would return the same value; anything else goes to zod for the verdict.
 */
export function isPlainMessage(value: unknown): value is Message {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  if ((m.role !== 'user' && m.role !== 'assistant') || typeof m.at !== 'string' || !Array.isArray(m.content)) return false;
  if (!onlyKeys(m, MESSAGE_KEYS)) return false;
  for (const block of m.content as unknown[]) {
    if (typeof block !== 'object' || block === null) return false;
    const b = block as Record<string, unknown>;
    switch (b.type) {
      case 'text':
        if (typeof b.text !== 'string' || !onlyKeys(b, TEXT_KEYS)) return false;
        break;
      case 'tool_use':
        if (!isNonEmptyString(b.id) || !isNonEmptyString(b.name) || !onlyKeys(b, TOOL_USE_KEYS)) return false;
        break;
      case 'tool_result':
        if (!isNonEmptyString(b.toolUseId) || typeof b.content !== 'string' || !onlyKeys(b, TOOL_RESULT_KEYS)) return false;
        if (b.isError !== undefined && typeof b.isError !== 'boolean') return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** Validate a message read back from disk: the fast check, zod as the fallback and for the error text. */
export function validateMessage(value: unknown): MessageCheck {
  if (isPlainMessage(value)) return { ok: true, value };
  const result = messageSchema.safeParse(value);
  if (result.success) return { ok: true, value: result.data as Message };
  const first = result.error.issues[0];
  return { ok: false, error: `not a message: ${first ? `${first.path.join('.') || '(root)'}: ${first.message}` : 'invalid'}` };
}
