import type { AnyHandler, EventBus, Handler } from '../events/bus';
import type { EventInput, EventType, LegionEvent } from '../events/types';

/**
 * The bus of a remote core: it delivers events the server stamped (seq, at, runId kept as they
 * are) with the same contract as the core's bus (events/bus.ts): synchronous, in order, a
 * throwing subscriber reported and never stopping the others. `emit` is for notices of this
 * client only (the connection went away…): stamped with the last seq seen, never sent.
 */
export interface RelayBus extends EventBus {
  deliver(event: LegionEvent): void;
  /** The core's state was replaced by a snapshot as of `seq`: the bus's position moves there. */
  resync(seq: number): void;
}

export function createRelayBus(runId: string, startSeq: number, onSubscriberError?: (error: unknown) => void): RelayBus {
  const byType = new Map<EventType, Set<AnyHandler>>();
  const all = new Set<AnyHandler>();
  let seq = startSeq;
  const pending: LegionEvent[] = [];
  let delivering = false;

  const call = (handler: AnyHandler, event: LegionEvent): void => {
    try {
      handler(event);
    } catch (error) {
      try { onSubscriberError?.(error); } catch { /* never breaks delivery */ }
    }
  };
  const deliver = (event: LegionEvent): void => {
    pending.push(event);
    if (delivering) return;
    delivering = true;
    try {
      for (let i = 0; i < pending.length; i++) {
        const e = pending[i]!;
        for (const h of [...all]) call(h, e);
        const typed = byType.get(e.type);
        if (typed) for (const h of [...typed]) call(h, e);
      }
    } finally {
      pending.length = 0;
      delivering = false;
    }
  };

  return {
    runId,
    deliver(event) {
      if (event.seq > seq) seq = event.seq;
      deliver(event);
    },
    resync(at) {
      if (at > seq) seq = at;
    },
    emit(input: EventInput) {
      const event = { ...input, seq, at: new Date().toISOString(), runId } as LegionEvent;
      deliver(event);
      return event;
    },
    subscribe<T extends EventType>(type: T, handler: Handler<T>) {
      let set = byType.get(type);
      if (!set) byType.set(type, (set = new Set()));
      const h = handler as unknown as AnyHandler;
      set.add(h);
      return () => void set.delete(h);
    },
    subscribeAll(handler: AnyHandler) {
      all.add(handler);
      return () => void all.delete(handler);
    },
    lastSeq: () => seq,
  };
}
