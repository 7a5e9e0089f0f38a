import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBus, type EventBus } from '../../src/events/bus';
import type { LegionEvent } from '../../src/events/types';
import { layoutFor, type Layout } from '../../src/storage/layout';

/** A temp workspace with its layout; `cleanup` removes it. */
export async function tempLayout(): Promise<{ dir: string; layout: Layout; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'legion-authz-'));
  return { dir, layout: layoutFor(dir), cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Deterministic ids: `apr-1`, `apr-2`, … (per prefix). `start` continues a sequence after a restart. */
export function counterIds(start = 0): { next(prefix: string): string } {
  const counters = new Map<string, number>();
  return {
    next(prefix) {
      const n = (counters.get(prefix) ?? start) + 1;
      counters.set(prefix, n);
      return `${prefix}-${n}`;
    },
  };
}

/** A clock that returns `iso` until moved with `set`. */
export function fixedClock(iso = '2026-03-04T05:06:07.000Z'): { now(): Date; set(next: string): void } {
  let current = new Date(iso);
  return { now: () => new Date(current), set: (next) => void (current = new Date(next)) };
}

/** A bus that records every event it delivers. */
export function recordingBus(runId = 'run-1'): { bus: EventBus; events: LegionEvent[] } {
  const bus = createBus({ runId });
  const events: LegionEvent[] = [];
  bus.subscribeAll((e) => events.push(e));
  return { bus, events };
}
