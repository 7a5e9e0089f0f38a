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

/** Deterministic ids `1`, `2`, … (the queue makes `apr-1`, `apr-2`). `start` continues a sequence after a restart. */
export function counterIds(start = 0): () => string {
  let n = start;
  return () => String(++n);
}

/** A clock (`() => Date`) that returns `iso` until moved with `clock.set`. */
export function fixedClock(iso = '2026-03-04T05:06:07.000Z'): (() => Date) & { set(next: string): void } {
  let current = new Date(iso);
  const clock = () => new Date(current);
  return Object.assign(clock, { set: (next: string) => void (current = new Date(next)) });
}

/** A bus that records every event it delivers. */
export function recordingBus(runId = 'run-1'): { bus: EventBus; events: LegionEvent[] } {
  const bus = createBus({ runId });
  const events: LegionEvent[] = [];
  bus.subscribeAll((e) => events.push(e));
  return { bus, events };
}
