import * as restate from '@restatedev/restate-sdk';
import { z } from 'zod';

/**
 * The mailbox of one delegation running elsewhere (docs/engine.md#approvals-across-objects): the
 * approval requests its delegates (any invocation below it) send to the caller's agent. A caller
 * cannot be sent anything while its invocation waits on its call (the session object is busy with
 * the turn), so it takes its mail through this object: `take` with an awakeable of its own
 * invocation, resolved with everything posted so far, or with the next post. Keyed by the
 * caller's invocation id and the number of the call in it.
 */
export const MAILBOX_OBJECT = 'LegionMailbox';

const ITEMS = 'items';
const WAITER = 'waiter';

export function mailboxObject() {
  return restate.object({
    name: MAILBOX_OBJECT,
    handlers: {
      /** One item for the caller (a request and the awakeable its answer goes to). */
      post: async (ctx: restate.ObjectContext, item: unknown): Promise<void> => {
        const waiter = await ctx.get<string>(WAITER);
        if (waiter) {
          ctx.clear(WAITER);
          ctx.resolveAwakeable(waiter, [item]);
          return;
        }
        ctx.set(ITEMS, [...((await ctx.get<unknown[]>(ITEMS)) ?? []), item]);
      },
      /** The caller waits for its next items on the awakeable `raw` names. */
      take: async (ctx: restate.ObjectContext, raw: unknown): Promise<void> => {
        const awakeable = z.string().min(1).max(500).safeParse(raw);
        if (!awakeable.success) throw new restate.TerminalError('take: an awakeable id is expected');
        const items = (await ctx.get<unknown[]>(ITEMS)) ?? [];
        if (items.length === 0) return ctx.set(WAITER, awakeable.data);
        ctx.clear(ITEMS);
        ctx.resolveAwakeable(awakeable.data, items);
      },
      /** The call ended: nothing more is taken. */
      close: async (ctx: restate.ObjectContext): Promise<void> => {
        ctx.clearAll();
      },
    },
  });
}
