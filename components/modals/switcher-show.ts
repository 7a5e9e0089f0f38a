import type { UiStore } from '../state/store';

/**
 * Close the modal and show `sessionId` in a focused lane. The UI learns about a session from
 * the core's `session-open` event; when it has not been reduced yet, the lane is placed as
 * soon as it is (the modal closes at once either way).
 */
export function closeAndShow(store: UiStore, sessionId: string): void {
  if (store.getState().sessions[sessionId]) {
    store.dispatch([{ type: 'close-modal' }, { type: 'show-session', sessionId }]);
    return;
  }
  store.dispatch({ type: 'close-modal' });
  const stop = store.subscribe(() => {
    if (!store.getState().sessions[sessionId]) return;
    stop();
    store.dispatch({ type: 'show-session', sessionId });
  });
}
