import type { EventBus } from '../../src/events/bus';
import type { UiStore } from '../state/store';
import { focusedSession, isUserSession, viewOf } from '../state/ui-state';
import { decidedByText } from '../../src/remote/event-text';
import { queueContent } from './approval-queue-model';

export interface ApprovalWatchOptions {
  readonly bus: EventBus;
  readonly store: UiStore;
  /** `ui.bell`: ring the terminal bell for requests the user might not see. */
  readonly bell: boolean;
  /** Writes `\x07` to the terminal. */
  readonly ring: () => void;
  /** Milliseconds; bells closer than `BELL_GAP_MS` ring once (a batch is one bell). */
  readonly now: () => number;
}

export const BELL_GAP_MS = 1000;

/**
 * What a new request for the user does (docs/design.md#the-tui): the approval queue opens by itself when
 * no modal is open and the focused lane's composer is empty (so no typing is taken from the
 * user); the terminal bell rings (`ui.bell`) when the user's lane is not focused — the
 * focused lane is agents talking, or there is none — or when the queue could not open.
 * Requests that wait on an agent approver do neither (they reach the user only by climbing,
 * which re-emits the request with `approverId: 'user'`). Returns the unsubscribe function.
 */
export function watchApprovals(options: ApprovalWatchOptions): () => void {
  let lastBell = -Infinity;
  const unwatchResolve = watchDecidedElsewhere(options.bus, options.store);
  // Typed subscriptions run after `subscribeAll` ones: the store has already reduced the event.
  const unwatchRequest = options.bus.subscribe('approval-request', (event) => {
    if (event.approverId !== 'user') return;
    const state = options.store.getState();
    const session = focusedSession(state);
    const composerEmpty = !session || viewOf(state, session.id).draft.text === '';
    let opened = state.modal?.kind === 'approvals';
    if (state.modal === null && composerEmpty) {
      options.store.dispatch({ type: 'open-modal', modal: { kind: 'approvals', openedByItselfAt: options.now() } });
      opened = true;
    }
    const userLaneFocused = session !== undefined && isUserSession(session);
    if (options.bell && (!userLaneFocused || !opened)) {
      const t = options.now();
      if (t - lastBell >= BELL_GAP_MS) {
        lastBell = t;
        options.ring();
      }
    }
  });
  return () => { unwatchRequest(); unwatchResolve(); };
}

/**
 * A queue that opened by itself (the user did not ask for it) closes once nothing is left in it
 * because the requests were decided elsewhere (another terminal, the web page, Telegram, an agent
 * approver); the status line says where ("apr-3 approved in Telegram by @ann": the reducer
 * says it for remote decisions, this for the others). Checked after the current call stack: a
 * decision made in this queue closes it itself (ApprovalQueue's `decide`), and a local core
 * reports that decision while the queue is still deciding. A queue the user opened stays open.
 */
function watchDecidedElsewhere(bus: EventBus, store: UiStore): () => void {
  return bus.subscribe('approval-resolve', (event) => {
    queueMicrotask(() => {
      const state = store.getState();
      const modal = state.modal;
      if (modal?.kind !== 'approvals' || modal.openedByItselfAt === undefined) return;
      if (queueContent(state.pending).flat.length > 0) return;
      const where = event.decidedBy === 'user' ? 'in another terminal' : decidedByText(event.decidedBy);
      store.dispatch(event.decidedBy.startsWith('remote:')
        ? { type: 'close-modal' }
        : [{ type: 'close-modal' }, { type: 'flash', flash: { level: 'info', text: `${event.requestId} ${event.decision} ${where}` } }]);
    });
  });
}
