import type { LegionCore } from '../../src/runtime/core-api';
import { UR_AGENT_ID, USER_ID } from '../../src/collective/participant';
import { DEFAULT_SESSION_NAME, sessionIdOf } from '../../src/runtime/core-api';
import { stateFromCore } from './from-core';
import { newSessionView, type UiSettings, type UiState } from './ui-state';

/**
 * The home lane (docs/design.md#participants-sessions-runs): `user → ur-agent · default` is
 * always the first lane and has the focus when the TUI starts, whatever ran last (a
 * `legion run --to resource-agent`, a delegation) and whether or not it has messages yet.
 */
export const HOME_SESSION_ID = sessionIdOf({ initiatorId: USER_ID, responderId: UR_AGENT_ID, name: DEFAULT_SESSION_NAME });

/** `lanes` with the home session first (when the state knows it), the rest in their order, focus on it. */
export function homeFirst(state: UiState): UiState {
  if (!state.sessions[HOME_SESSION_ID]) return state;
  const lanes = [HOME_SESSION_ID, ...state.lanes.filter((id) => id !== HOME_SESSION_ID)].slice(0, state.settings.maxLanes);
  return { ...state, lanes, focus: 0 };
}

/**
 * The UI state at start: opens the home session in the core (it is not written to disk until
 * its first message), then the run as the core knows it, home lane first and focused.
 * `problem` says why the home session could not be opened (e.g. a damaged collective).
 *
 * The same rule local and attached (docs/serve.md#attaching): a local core knows the session
 * as soon as `openSession` returns; an attached one learns it from the server's `session-open`
 * a moment later, so an opened home session the state does not know yet is added here, empty
 * (the event that follows finds it and changes nothing: lanes opened by events never take the
 * focus).
 */
export function startState(core: LegionCore, settings: UiSettings, resumed: boolean): { state: UiState; problem: string | null } {
  const opened = core.openSession(UR_AGENT_ID, DEFAULT_SESSION_NAME);
  const known = stateFromCore(core, settings, resumed);
  const state = opened.ok && !known.sessions[HOME_SESSION_ID]
    ? {
      ...known,
      sessions: { ...known.sessions, [HOME_SESSION_ID]: newSessionView(HOME_SESSION_ID, USER_ID, UR_AGENT_ID, DEFAULT_SESSION_NAME, new Date().toISOString()) },
      order: [...known.order, HOME_SESSION_ID],
    }
    : known;
  return { state: homeFirst(state), problem: opened.ok ? null : `cannot open ${UR_AGENT_ID}: ${opened.error}` };
}
