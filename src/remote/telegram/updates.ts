import { z } from 'zod';

/**
 * The parts of a Bot API update Telegram approvals act on (docs/remote.md#telegram), checked
 * with zod: the update comes over the network from whatever `apiRoot` names, so its shape is
 * not trusted. Unknown fields pass (Telegram adds them over time); a missing or mistyped field
 * that Legion reads, or an oversized text, makes the whole update ignored.
 */
const id = z.number().int().safe();
const chat = z.object({ id });
/** Telegram's update ids count up from a positive number; anything else did not come from Telegram. */
export const updateId = z.number().int().safe().nonnegative();

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

export type UpdateBatch =
  | {
    readonly kind: 'batch';
    /** The updates not yet seen (a valid id at or past `offset`), in order. */
    readonly fresh: readonly { readonly id: number; readonly update: unknown }[];
    /** How many had no valid update_id (passed over, never acted on). */
    readonly badIds: number;
    /** Where the next poll starts: past every valid id in the batch (or `offset` for an empty one). */
    readonly next: number;
  }
  /** Nothing to move the offset past (not an array, or no update with a valid id newer than `offset`): polling it again at once would spin. */
  | { readonly kind: 'stuck'; readonly problem: string };

/**
 * A `getUpdates` result checked before the poll loop acts on it: `update_id` must be a safe
 * nonnegative integer, else `offset` could never move past it and the same batch would return
 * on every poll.
 */
export function parseUpdateBatch(result: unknown, offset: number): UpdateBatch {
  if (!Array.isArray(result)) return { kind: 'stuck', problem: 'the result is not a list of updates' };
  if (result.length === 0) return { kind: 'batch', fresh: [], badIds: 0, next: offset };
  const fresh: { id: number; update: unknown }[] = [];
  let badIds = 0;
  let max = -1;
  for (const update of result) {
    const checked = updateId.safeParse(typeof update === 'object' && update !== null ? (update as Record<string, unknown>).update_id : undefined);
    if (!checked.success) badIds += 1;
    else {
      max = Math.max(max, checked.data);
      if (checked.data >= offset) fresh.push({ id: checked.data, update });
    }
  }
  if (fresh.length === 0) return { kind: 'stuck', problem: badIds > 0 ? `${badIds} update${badIds === 1 ? '' : 's'} without a valid update_id` : 'only updates already seen' };
  return { kind: 'batch', fresh, badIds, next: max + 1 };
}
