import type { UiState } from './ui-state';
import { focusedSession, isBusy, viewOf } from './ui-state';

/**
 * Put `sessionId` in a lane. With room, a new lane is added; when all lanes are taken, the
 * least recently active idle lane other than the focused one gives way (its session stays in
 * the switcher, its view state is kept). `force` (the user asked for it) falls back to the
 * focused lane when no lane is idle; otherwise the session does not get a lane.
 */
export function placeLane(state: UiState, sessionId: string, options: { focus: boolean; force: boolean }): UiState {
  const existing = state.lanes.indexOf(sessionId);
  if (existing !== -1) return options.focus ? { ...state, focus: existing } : state;
  const max = state.settings.maxLanes;
  if (state.lanes.length < max) {
    const lanes = [...state.lanes, sessionId];
    return { ...state, lanes, focus: options.focus || state.lanes.length === 0 ? lanes.length - 1 : state.focus };
  }
  let victim = -1;
  let oldest = '';
  state.lanes.forEach((id, index) => {
    if (index === state.focus) return;
    const s = state.sessions[id];
    if (s && isBusy(s.status)) return;
    const at = s?.lastActivity ?? '';
    if (victim === -1 || at < oldest) { victim = index; oldest = at; }
  });
  if (victim === -1) {
    if (!options.force) return state;
    victim = state.focus;
  }
  const lanes = state.lanes.map((id, index) => (index === victim ? sessionId : id));
  return { ...state, lanes, focus: options.focus ? victim : state.focus };
}

/**
 * A question of an agent to the user just opened in `sessionId`: show it in a lane and focus
 * it when that takes nothing from the user (no modal open, the focused lane's composer empty);
 * otherwise it gets a lane only where one is free or idle, and the status bar points to it.
 */
export function presentQuestion(state: UiState, sessionId: string): UiState {
  const focused = focusedSession(state);
  const free = state.modal === null && (!focused || viewOf(state, focused.id).draft.text === '');
  return placeLane(state, sessionId, { focus: free, force: free });
}

/** Parse `session-{initiator}__{responder}__{name}` (docs/design.md#participants-sessions-runs); null when malformed. */
export function parseSessionId(id: string): { initiatorId: string; responderId: string; name: string } | null {
  const m = /^session-([^_]+(?:_[^_]+)*)__([^_]+(?:_[^_]+)*)__(.+)$/.exec(id);
  return m ? { initiatorId: m[1]!, responderId: m[2]!, name: m[3]! } : null;
}
