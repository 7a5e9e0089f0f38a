import { z } from 'zod';
import type { EventBus } from './bus';
import { EVENT_TYPES, type LegionEvent } from './types';
import { dropTornTail, openJsonlAppender, readJsonl, type JsonlIssue } from '../storage/jsonl';
import { zodValidator } from '../storage/zod-validate';
import { createDeltaCoalescer, DELTA_WINDOW_MS } from './coalesce';
import { lazySchema } from '../storage/lazy-schema';

export interface Ledger {
  /** Stop recording and close the file. Idempotent. */
  close(): void;
  /** A torn last line left by a crash, cut off before recording started (report it as a notice). */
  readonly issues: readonly JsonlIssue[];
}

/**
 * Record every event of `bus` to `path` (`runs/<runId>/events.jsonl`), one line per event,
 * in emission order, appended synchronously so the file is never behind the bus when
 * `emit` returns — except `text-delta`: a session's deltas within `coalesceMs` (default
 * 50 ms) become one line (their joined text, the `seq` of the last), written when the window
 * ends or before the next other event, whichever is first (coalesce.ts), the lines of one flush
 * and the event after them in one write; 0 writes every delta.
 * A write failure throws inside the subscriber, which the bus reports through
 * `onSubscriberError`; it never reaches the emitter. A torn last line (a crash mid-write) is
 * cut off first, so every line of the ledger parses; the caller holds the run lock.
 */
export function attachLedger(bus: EventBus, path: string, options: { coalesceMs?: number } = {}): Ledger {
  const torn = dropTornTail(path);
  const appender = openJsonlAppender(path);
  const coalesceMs = options.coalesceMs ?? DELTA_WINDOW_MS;
  const coalescer = coalesceMs > 0 ? createDeltaCoalescer((event) => appender.append(event), coalesceMs, (events) => appender.append(...events)) : null;
  const unsubscribe = bus.subscribeAll(coalescer ? (event) => coalescer.push(event) : (event) => appender.append(event));
  let closed = false;
  return {
    issues: torn ? [torn] : [],
    close() {
      if (closed) return;
      closed = true;
      unsubscribe();
      try {
        coalescer?.close();
      } finally {
        appender.close();
      }
    },
  };
}

/** Shape check of a ledger line read back: the envelope and a known type; bodies pass through. */
const ledgerLineSchema = lazySchema(() =>
  z.looseObject({
    seq: z.number().int().positive(),
    at: z.string(),
    runId: z.string().min(1),
    type: z.enum(EVENT_TYPES as [LegionEvent['type'], ...LegionEvent['type'][]]),
  }),
);

export interface LedgerRead {
  readonly events: LegionEvent[];
  /** Torn last line or broken lines, each with file and line (see `readJsonl`). */
  readonly issues: JsonlIssue[];
}

/** Read a ledger back (missing file = no events). */
export async function readLedger(path: string): Promise<LedgerRead> {
  const { records, issues } = await readJsonl(path, zodValidator(ledgerLineSchema()));
  return { events: records as unknown as LegionEvent[], issues };
}
