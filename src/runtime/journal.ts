import type { EventBus } from '../events/bus';
import type { AgentStatus, NoticeLevel } from '../events/types';
import type { Message } from '../model/message';
import type { SessionHandle } from '../session/types';
import type { SecretScrubber } from '../authz/scrub';
import type { SessionSlot } from './turn';
import type { PriceOf } from './ports';

/**
 * How the runtime records what happens: every message goes through `append` (persisted, then
 * `message-add`), every status through `setStatus` (emitted on change only), so the UI and the
 * ledger see exactly what is on disk.
 */
export interface Journal {
  /** ISO time from the core's clock. */
  now(): string;
  append(session: SessionHandle, message: Message): void;
  setStatus(slot: SessionSlot, status: AgentStatus, detail?: string): void;
  notice(level: NoticeLevel, message: string, sessionId?: string): void;
  /** A provider's token report as the one `usage` event, priced by the core's `priceOf` (null: no price known). */
  usage(sessionId: string, participantId: string, usage: Parameters<PriceOf>[0]): void;
}

/**
 * Scrub a message of the known secrets, then append it (memory and disk hold the same): the one
 * way a message is written to a session. The journal's `append` emits it next; `legion undo`,
 * with no Legion running, has no bus to tell.
 */
export function persistScrubbed(session: Pick<SessionHandle, 'append'>, message: Message, scrub: SecretScrubber): Message {
  const stored = scrub.value(message);
  session.append(stored);
  return stored;
}

export function createJournal(deps: { bus: EventBus; scrub: SecretScrubber; clock: () => Date; priceOf?: PriceOf }): Journal {
  const { bus, scrub, clock, priceOf } = deps;
  return {
    now: () => clock().toISOString(),
    append(session, message) {
      const stored = persistScrubbed(session, message, scrub);
      bus.emit({ type: 'message-add', sessionId: session.id, message: stored });
    },
    setStatus(slot, status, detail) {
      if (slot.status === status && slot.statusDetail === detail) return;
      slot.status = status;
      slot.statusDetail = detail;
      bus.emit({
        type: 'agent-status',
        participantId: slot.handle.key.responderId,
        sessionId: slot.handle.id,
        status,
        ...(detail !== undefined ? { detail } : {}),
      });
    },
    notice(level, message, sessionId) {
      bus.emit({ type: 'notice', level, message, ...(sessionId !== undefined ? { sessionId } : {}) });
    },
    usage(sessionId, participantId, usage) {
      const { model, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens } = usage;
      const costUsd = priceOf ? priceOf(usage) : null;
      bus.emit({ type: 'usage', sessionId, participantId, model, inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, costUsd });
    },
  };
}
