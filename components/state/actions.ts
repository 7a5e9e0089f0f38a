import type { NoticeLevel } from '../../src/events/types';
import type { Participant } from '../../src/collective/participant';
import type { LinkState, PendingApproval } from '../../src/runtime/core-api';
import type { Draft, ModalState, ScrollPos, UiState } from './ui-state';
import { DEFAULT_VIEW, viewOf } from './ui-state';
import { placeLane } from './lanes';
import { resyncState } from './from-core';

/** What the UI itself changes (keys, modals): applied by `applyAction`, never by events. */
export type UiAction =
  | { readonly type: 'focus-lane'; readonly delta: number }
  | { readonly type: 'focus-index'; readonly index: number }
  /** Show a session in a lane and focus it (switcher, new session, history). */
  | { readonly type: 'show-session'; readonly sessionId: string }
  | { readonly type: 'set-scroll'; readonly sessionId: string; readonly scroll: ScrollPos }
  | { readonly type: 'set-draft'; readonly sessionId: string; readonly draft: Draft }
  | { readonly type: 'toggle-expanded'; readonly sessionId: string }
  | { readonly type: 'open-modal'; readonly modal: ModalState }
  | { readonly type: 'close-modal' }
  | { readonly type: 'flash'; readonly flash: { readonly level: NoticeLevel; readonly text: string } | null }
  | { readonly type: 'clear-notice' }
  | { readonly type: 'sent'; readonly text: string }
  | { readonly type: 'browse-sent'; readonly index: number | null }
  | { readonly type: 'arm-quit'; readonly at: number | null }
  | { readonly type: 'participants'; readonly participants: readonly Participant[] }
  | { readonly type: 'pending'; readonly pending: readonly PendingApproval[] }
  /** The core replaced its state (an attached core that missed events): `fresh` is the run as it knows it now. */
  | { readonly type: 'resync'; readonly fresh: UiState }
  /** The attached core's connection changed state: the line it gives is shown while it is down. */
  | { readonly type: 'link'; readonly link: LinkState };

export const MAX_SENT_HISTORY = 200;

export function applyAction(state: UiState, action: UiAction): UiState {
  switch (action.type) {
    case 'focus-lane': {
      const n = state.lanes.length;
      if (n === 0) return state;
      return { ...state, focus: (((state.focus + action.delta) % n) + n) % n };
    }
    case 'focus-index':
      return action.index >= 0 && action.index < state.lanes.length ? { ...state, focus: action.index } : state;
    case 'show-session':
      if (!state.sessions[action.sessionId]) return state;
      return placeLane(state, action.sessionId, { focus: true, force: true });
    case 'set-scroll':
      return withView(state, action.sessionId, { scroll: action.scroll });
    case 'set-draft':
      return withView(state, action.sessionId, { draft: action.draft });
    case 'toggle-expanded':
      return withView(state, action.sessionId, { expanded: !viewOf(state, action.sessionId).expanded });
    case 'open-modal':
      return { ...state, modal: action.modal };
    case 'close-modal':
      return state.modal === null ? state : { ...state, modal: null };
    case 'flash':
      return state.flash === action.flash ? state : { ...state, flash: action.flash };
    case 'clear-notice':
      return state.notice === null ? state : { ...state, notice: null };
    case 'sent': {
      const sent = state.sent[state.sent.length - 1] === action.text ? state.sent : [...state.sent, action.text].slice(-MAX_SENT_HISTORY);
      return { ...state, sent, sentIndex: null };
    }
    case 'browse-sent':
      return { ...state, sentIndex: action.index };
    case 'resync':
      return resyncState(state, action.fresh);
    case 'link':
      // Down: the line replaces the notice shown (older news), so the notice saying it is back later stands alone.
      if (action.link.state === 'connected') return state.link ? { ...state, link: null } : state;
      return { ...state, link: { state: action.link.state, text: action.link.message }, notice: null };
    case 'arm-quit':
      return { ...state, quitArmedAt: action.at };
    case 'participants':
      return { ...state, participants: action.participants };
    case 'pending':
      return { ...state, pending: Object.fromEntries(action.pending.map((p) => [p.requestId, p])) };
    default: {
      const unreachable: never = action;
      return unreachable;
    }
  }
}

function withView(state: UiState, sessionId: string, change: Partial<typeof DEFAULT_VIEW>): UiState {
  return { ...state, views: { ...state.views, [sessionId]: { ...viewOf(state, sessionId), ...change } } };
}
