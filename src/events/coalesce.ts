import type { EventOf, LegionEvent } from './types';
import { plainCopy } from './plain-copy';

/** The default window: one `text-delta` line per session per 50 ms. */
export const DELTA_WINDOW_MS = 50;

export interface DeltaCoalescer {
  /** Take one event: a text delta waits (joined with the session's next ones), anything else is written at once, after the deltas before it. */
  push(event: LegionEvent): void;
  /** Write the waiting deltas now. */
  flush(): void;
  /** Flush and stop the timer. */
  close(): void;
}

/**
 * Joins the `text-delta` events of each session that arrive within `windowMs` into one event
 * (its text the concatenation, its `seq` and `at` those of the last delta joined, `joined` how
 * many) for a writer
 * that need not see every delta: the ledger (events.jsonl), `legion run --json --coalesce`.
 * The bus still delivers every delta; this only changes what is written. Order is kept: any
 * other event first writes the waiting deltas (the lines in the order of their `seq`), so what
 * is written stays in `seq` order and a session's text is complete before its `message-add`.
 * `writeAll`, when given, takes what one flush writes at once — the waiting lines, and the event
 * that made the flush after them — instead of `write` once a line: the ledger appends them in one
 * write (a window of 20 sessions streaming: one write instead of 20).
 */
export function createDeltaCoalescer(write: (event: LegionEvent) => void, windowMs = DELTA_WINDOW_MS, writeAll?: (events: readonly LegionEvent[]) => void): DeltaCoalescer {
  /** Waiting deltas by session. */
  const waiting = new Map<string, { last: EventOf<'text-delta'>; texts: string[] }>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  /** A write that failed in the timer's flush: thrown by the next `push` (inside the bus, which reports it). */
  let failed: { error: unknown } | null = null;

  /** What one flush writes: `writeAll` once (the ledger: one append), else `write` for each. */
  const emit = (events: LegionEvent[]): void => {
    if (events.length === 0) return;
    if (writeAll) writeAll(events);
    else for (const event of events) write(event);
  };

  /** The waiting deltas as lines, in the order of each line's seq (its last delta's): the lines stay in seq order. */
  const drain = (): LegionEvent[] => {
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    if (waiting.size === 0) return [];
    const batches = [...waiting.values()].sort((a, b) => a.last.seq - b.last.seq);
    waiting.clear();
    return batches.map(({ last, texts }) => {
      if (texts.length === 1) return last;
      // `{ ...last, text, joined }` without V8's slow path for a spread followed by fields (plain-copy.ts).
      const joined = plainCopy(last) as { -readonly [K in keyof EventOf<'text-delta'>]: EventOf<'text-delta'>[K] };
      joined.text = texts.join('');
      joined.joined = texts.length;
      return joined;
    });
  };

  const flush = (): void => emit(drain());

  const take = (event: LegionEvent): void => {
    if (event.type !== 'text-delta') {
      const lines = drain();
      lines.push(event);
      emit(lines);
      return;
    }
    const batch = waiting.get(event.sessionId);
    if (batch) {
      batch.texts.push(event.text);
      batch.last = event;
    } else {
      waiting.set(event.sessionId, { last: event, texts: [event.text] });
    }
    if (!timer) {
      timer = setTimeout(() => {
        try {
          flush();
        } catch (error) {
          failed ??= { error };
        }
      }, windowMs);
      timer.unref?.();
    }
  };

  return {
    push(event) {
      take(event);
      if (failed) {
        const { error } = failed;
        failed = null;
        throw error;
      }
    },
    flush,
    close: flush,
  };
}
