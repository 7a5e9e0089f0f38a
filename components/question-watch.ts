import type { EventBus } from '../src/events/bus';
import type { UiStore } from './state/store';
import { awaitsUser } from './state/ui-state';

export interface QuestionWatchOptions {
  readonly bus: EventBus;
  readonly store: UiStore;
  /** `ui.bell`: ring the terminal bell for a question the user might not see. */
  readonly bell: boolean;
  /** Writes `\x07` to the terminal. */
  readonly ring: () => void;
}

/**
 * What a question of an agent to the user does besides what the reducer does (its lane opens,
 * and takes the focus when no modal is open and the composer is empty): when it could not take
 * the focus, the terminal bell rings once (`ui.bell`); the status bar's hint points to it.
 * Returns the unsubscribe function.
 */
export function watchQuestions(options: QuestionWatchOptions): () => void {
  const open = new Set<string>();
  // Typed subscriptions run after `subscribeAll` ones: the store has already reduced the event.
  return options.bus.subscribe('agent-status', (event) => {
    const state = options.store.getState();
    const session = state.sessions[event.sessionId];
    if (!session || !awaitsUser(session)) return void open.delete(event.sessionId);
    if (open.has(session.id)) return;
    open.add(session.id);
    if (options.bell && state.lanes[state.focus] !== session.id) options.ring();
  });
}
