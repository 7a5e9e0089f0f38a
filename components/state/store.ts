import type { LegionCore } from '../../src/runtime/core-api';
import type { LegionEvent } from '../../src/events/types';
import type { UiState } from './ui-state';
import type { UiAction } from './actions';
import { applyAction } from './actions';
import { reduce } from './reduce';

export interface Timers {
  readonly now: () => number;
  readonly setTimeout: (fn: () => void, ms: number) => unknown;
  readonly clearTimeout: (handle: unknown) => void;
}

export const REAL_TIMERS: Timers = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * The UI state container. Bus events are reduced at once (cheap) but listeners hear about
 * them at most once per frame (`frameMs`), so a burst of deltas costs one render. UI actions
 * (keys) notify at once, flushing pending events with them. No timer runs while idle.
 */
export interface UiStore {
  getState(): UiState;
  /** Apply one action or several (one notification, so one render). */
  dispatch(action: UiAction | readonly UiAction[]): void;
  subscribe(listener: () => void): () => void;
  /** Stop listening to the bus and cancel a pending frame. */
  dispose(): void;
}

export interface StoreOptions {
  readonly core: LegionCore;
  readonly initial: UiState;
  readonly frameMs: number;
  readonly timers?: Timers;
}

export function createUiStore(options: StoreOptions): UiStore {
  const timers = options.timers ?? REAL_TIMERS;
  const listeners = new Set<() => void>();
  let state = options.initial;
  let dirty = false;
  let timer: unknown = null;
  let lastNotify = -Infinity;

  const notify = (): void => {
    if (timer !== null) { timers.clearTimeout(timer); timer = null; }
    dirty = false;
    lastNotify = timers.now();
    for (const listener of [...listeners]) listener();
  };
  const schedule = (): void => {
    dirty = true;
    if (timer !== null) return;
    const wait = Math.max(0, options.frameMs - (timers.now() - lastNotify));
    let fired = false;
    const handle = timers.setTimeout(() => { fired = true; timer = null; if (dirty) notify(); }, wait);
    if (!fired) timer = handle; // a synchronous timer (tests) has already run
  };
  const onEvent = (event: LegionEvent): void => {
    const next = reduce(state, event);
    if (event.type === 'participant-change') {
      state = applyAction(next, { type: 'participants', participants: options.core.participants() });
    } else if (next === state) {
      return;
    } else {
      state = next;
    }
    schedule();
  };
  const unsubscribe = options.core.bus.subscribeAll(onEvent);

  return {
    getState: () => state,
    dispatch(action) {
      let next = state;
      for (const a of Array.isArray(action) ? (action as readonly UiAction[]) : [action as UiAction]) next = applyAction(next, a);
      if (next === state && !dirty) return;
      state = next;
      notify();
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    dispose() {
      unsubscribe();
      if (timer !== null) timers.clearTimeout(timer);
      timer = null;
      listeners.clear();
    },
  };
}
