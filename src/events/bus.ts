import type { EventInput, EventOf, EventType, LegionEvent } from './types';
import { plainCopy } from './plain-copy';

export type Unsubscribe = () => void;
export type Handler<T extends EventType> = (event: EventOf<T>) => void;
export type AnyHandler = (event: LegionEvent) => void;

/**
 * The typed event bus of one run.
 * Contract: `emit` stamps `seq` (+1 per event, starting after `startSeq`), `at` and `runId`,
 * then delivers synchronously in subscription order. A throwing subscriber is reported
 * through `onSubscriberError` and never stops the emitter or the other subscribers.
 * Every subscriber sees events in `seq` order: an `emit` from inside a handler is queued
 * and delivered once the current event has reached every subscriber (so it returns
 * before its own delivery).
 * Handlers that need slow work must queue it themselves (the ledger does).
 */
export interface EventBus {
  readonly runId: string;
  emit(input: EventInput): LegionEvent;
  subscribe<T extends EventType>(type: T, handler: Handler<T>): Unsubscribe;
  subscribeAll(handler: AnyHandler): Unsubscribe;
  /** The seq of the last emitted event (0 before any). */
  lastSeq(): number;
}

export interface BusOptions {
  readonly runId: string;
  readonly startSeq?: number;
  readonly now?: () => Date;
  readonly onSubscriberError?: (error: unknown, event: LegionEvent) => void;
  /**
   * Applied once to every stamped event before any subscriber sees it (and what `emit`
   * returns): the composition root passes the secret scrubber, so the ledger, `--json` and
   * the UI never receive an API key. Must return the event itself or a same-shaped copy.
   */
  readonly transform?: (event: LegionEvent) => LegionEvent;
}

/** The subscriber side of a bus: who listens, and delivery by the contract of `EventBus`. */
export interface Dispatcher extends Pick<EventBus, 'subscribe' | 'subscribeAll'> {
  /**
   * Deliver a stamped event to every subscriber, synchronously, in subscription order; one
   * delivered from inside a handler is queued until the current event has reached everyone.
   */
  dispatch(event: LegionEvent): void;
}

/** Delivery shared by the core's bus and a remote core's relay bus (serve/relay-bus.ts). */
export function createDispatcher(onSubscriberError?: (error: unknown, event: LegionEvent) => void): Dispatcher {
  const byType = new Map<EventType, Set<AnyHandler>>();
  const all = new Set<AnyHandler>();
  const pending: LegionEvent[] = [];
  let delivering = false;

  const deliver = (handler: AnyHandler, event: LegionEvent): void => {
    try {
      handler(event);
    } catch (error) {
      try {
        onSubscriberError?.(error, event);
      } catch {
        // An error reporter that throws must not break delivery either.
      }
    }
  };

  const deliverToAll = (event: LegionEvent): void => {
    // Copy the sets so a handler that (un)subscribes does not disturb this delivery.
    for (const handler of [...all]) deliver(handler, event);
    const typed = byType.get(event.type);
    if (typed) for (const handler of [...typed]) deliver(handler, event);
  };

  return {
    dispatch(event) {
      pending.push(event);
      if (delivering) return;
      delivering = true;
      try {
        for (let i = 0; i < pending.length; i++) deliverToAll(pending[i]!);
      } finally {
        pending.length = 0;
        delivering = false;
      }
    },
    subscribe(type, handler) {
      let set = byType.get(type);
      if (!set) byType.set(type, (set = new Set()));
      const h = handler as unknown as AnyHandler;
      set.add(h);
      return () => void set.delete(h);
    },
    subscribeAll(handler) {
      all.add(handler);
      return () => void all.delete(handler);
    },
  };
}

export function createBus(options: BusOptions): EventBus {
  const now = options.now ?? (() => new Date());
  const dispatcher = createDispatcher(options.onSubscriberError);
  let seq = options.startSeq ?? 0;
  return {
    runId: options.runId,
    emit(input) {
      seq += 1;
      // `{ ...input, seq, at, runId }`, without V8's slow path for a spread followed by fields (plain-copy.ts).
      const stamped = plainCopy(input) as unknown as LegionEvent & { seq: number; at: string; runId: string };
      stamped.seq = seq;
      stamped.at = now().toISOString();
      stamped.runId = options.runId;
      const event = options.transform ? options.transform(stamped) : stamped;
      dispatcher.dispatch(event);
      return event;
    },
    subscribe: dispatcher.subscribe,
    subscribeAll: dispatcher.subscribeAll,
    lastSeq: () => seq,
  };
}
