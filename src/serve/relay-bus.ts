import { createDispatcher, type EventBus } from '../events/bus';
import type { EventInput, LegionEvent } from '../events/types';

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
  const dispatcher = createDispatcher(onSubscriberError);
  let seq = startSeq;
  return {
    runId,
    deliver(event) {
      if (event.seq > seq) seq = event.seq;
      dispatcher.dispatch(event);
    },
    resync(at) {
      if (at > seq) seq = at;
    },
    emit(input: EventInput) {
      const event = { ...input, seq, at: new Date().toISOString(), runId } as LegionEvent;
      dispatcher.dispatch(event);
      return event;
    },
    subscribe: dispatcher.subscribe,
    subscribeAll: dispatcher.subscribeAll,
    lastSeq: () => seq,
  };
}
