import { z } from 'zod';

/**
 * The parts of a Bot API update Telegram approvals act on (docs/remote.md#telegram), checked
 * with zod: the update comes over the network from whatever `apiRoot` names, so its shape is
 * not trusted. Unknown fields pass (Telegram adds them over time); a missing or mistyped field
 * that Legion reads, or an oversized text, makes the whole update ignored.
 */
const id = z.number().int().safe();
const chat = z.object({ id });

export const callbackUpdate = z.object({
  id: z.string().min(1).max(256),
  // Telegram always names who pressed: a press without it decides nothing.
  from: z.object({ id, username: z.string().max(64).optional() }),
  data: z.string().max(64).optional(),
  message: z.object({ message_id: id, chat }).optional(),
});

/** Telegram caps a message at 4096 characters; anything longer did not come from Telegram. */
export const messageUpdate = z.object({
  message_id: id,
  chat,
  text: z.string().max(4096).optional(),
  reply_to_message: z.object({ message_id: id }).optional(),
});

export type CallbackUpdate = z.infer<typeof callbackUpdate>;
export type MessageUpdate = z.infer<typeof messageUpdate>;

export type ParsedUpdate =
  | { readonly kind: 'callback'; readonly query: CallbackUpdate }
  | { readonly kind: 'message'; readonly message: MessageUpdate }
  | { readonly kind: 'other' }
  | { readonly kind: 'malformed'; readonly problem: string };

export function parseUpdate(update: unknown): ParsedUpdate {
  if (typeof update !== 'object' || update === null) return { kind: 'malformed', problem: 'not an object' };
  const raw = update as Record<string, unknown>;
  const [kind, schema, value] = raw.callback_query !== undefined ? ['callback', callbackUpdate, raw.callback_query] as const
    : raw.message !== undefined ? ['message', messageUpdate, raw.message] as const : [null, null, null] as const;
  if (!kind) return { kind: 'other' };
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return { kind: 'malformed', problem: `${kind === 'callback' ? 'callback_query' : 'message'}${first?.path.length ? `.${first.path.join('.')}` : ''}: ${first?.message ?? 'invalid'}` };
  }
  return kind === 'callback' ? { kind, query: parsed.data as CallbackUpdate } : { kind, message: parsed.data as MessageUpdate };
}
