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
 * The UI state container. Bus events reach the screen at most once per frame (`frameMs`), so a
 * burst of deltas costs one render. Events other than text deltas are reduced at once; a
 * session's consecutive text deltas are joined and reduced as one when anything reads the state
 * or another event comes (`joinTextDeltas`): one reduction per session per frame instead of one
 * per delta, with the same state. UI actions (keys) reach it at once, applied to what the screen
 * shows without the events still waiting for their frame: a keystroke re-renders the composer,
 * not the streaming lanes. No timer runs while idle.
 */
export interface UiStore {
  /** The latest state: every event and action applied (commands read this). */
  getState(): UiState;
  /** What the screen shows: bus events join it once per frame; actions at once. */
  getSnapshot(): UiState;
  /**
   * What the screen shows but for streamed text: `getSnapshot()`, except that a frame whose only
   * changes are text deltas of sessions it already holds keeps the previous outline (their
   * `streaming` and `lastActivity` lag). The App renders from it and each lane reads its own
   * session (and activity row) from `getSnapshot()`, so a streamed frame renders the streaming
   * lane alone. While a modal is open (the switcher shows every session's age) it is the snapshot.
   */
  getOutline(): UiState;
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
  /** The reducer (a test counts its calls); `reduce` of reduce.ts. */
  readonly reduce?: (state: UiState, event: LegionEvent) => UiState;
}

type TextDelta = Extract<LegionEvent, { type: 'text-delta' }>;

/**
 * Text deltas waiting to be reduced, per session in the order the sessions first came: for each,
 * the last delta with the text of all of them and the latest `at`. Reducing that one event gives
 * the state reducing each would (a delta only appends its text to its session's `streaming` and
 * moves its `lastActivity` on, creating the session first when it is unknown); deltas of
 * different sessions commute but for that creation, which keeps the order of first appearance.
 */
export function joinTextDeltas(deltas: readonly TextDelta[]): TextDelta[] {
  const joined = new Map<string, { last: TextDelta; parts: string[]; at: string }>();
  for (const delta of deltas) {
    const entry = joined.get(delta.sessionId);
    if (!entry) joined.set(delta.sessionId, { last: delta, parts: [delta.text], at: delta.at });
    else {
      entry.last = delta;
      entry.parts.push(delta.text);
      if (delta.at > entry.at) entry.at = delta.at;
    }
  }
  return [...joined.values()].map(({ last, parts, at }) => (parts.length === 1 && at === last.at ? last : { ...last, text: parts.join(''), at }));
}

export function createUiStore(options: StoreOptions): UiStore {
  const timers = options.timers ?? REAL_TIMERS;
  const reducer = options.reduce ?? reduce;
  const listeners = new Set<() => void>();
  let state = options.initial;
  /** Text deltas not reduced yet (see joinTextDeltas); reduced before anything reads `state`. */
  let deltas: TextDelta[] = [];
  const reduceDeltas = (): void => {
    if (deltas.length === 0) return;
    const waiting = deltas;
    deltas = [];
    for (const delta of joinTextDeltas(waiting)) state = reducer(state, delta);
  };
  let shown = state;
  let outline = shown;
  /** Every change since the outline was last set is a text delta of a session the outline holds. */
  let textOnly = true;
  let dirty = false;
  let timer: unknown = null;
  let lastNotify = -Infinity;

  const tell = (): void => {
    for (const listener of [...listeners]) listener();
  };
  const notify = (): void => {
    if (timer !== null) { timers.clearTimeout(timer); timer = null; }
    reduceDeltas();
    dirty = false;
    shown = state;
    if (!textOnly || shown.modal !== null) outline = shown;
    textOnly = true;
    lastNotify = timers.now();
    tell();
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
    if (event.type === 'text-delta') {
      deltas.push(event);
      if (outline.sessions[event.sessionId] === undefined) textOnly = false;
      schedule();
      return;
    }
    reduceDeltas();
    const next = reducer(state, event);
    if (event.type === 'participant-change') {
      state = applyAction(next, { type: 'participants', participants: options.core.participants() });
    } else if (next === state) {
      return;
    } else {
      state = next;
    }
    textOnly = false;
    schedule();
  };
  const unsubscribe = options.core.bus.subscribeAll(onEvent);

  return {
    getState: () => {
      reduceDeltas();
      return state;
    },
    getSnapshot: () => shown,
    getOutline: () => outline,
    dispatch(action) {
      const actions = Array.isArray(action) ? (action as readonly UiAction[]) : [action as UiAction];
      reduceDeltas();
      let next = state;
      for (const a of actions) next = applyAction(next, a);
      if (next === state) return;
      state = next;
      if (!dirty) {
        shown = state;
      } else {
        let view = shown;
        for (const a of actions) view = applyAction(view, a);
        shown = view;
      }
      outline = shown;
      tell();
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
