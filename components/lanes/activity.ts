import type { SessionView, UiState } from '../state/ui-state';
import { isBusy, isUserSession } from '../state/ui-state';
import type { Theme } from '../theme';
import { statusText } from '../format';

/**
 * The activity row of a user's lane: the busy sessions its conversation set off (the
 * responder's delegations, and theirs in turn), most recent first, as one line:
 * `↳ ur-agent → scribe · files  running file_write (+1 more)`. Null when none is busy.
 */
export function activityRow(state: UiState, lane: SessionView, theme: Theme, spinner: string): string | null {
  if (!isUserSession(lane)) return null;
  const reached = new Set<string>([lane.responderId]);
  const busy: SessionView[] = [];
  let grew = true;
  const seen = new Set<string>([lane.id]);
  while (grew) {
    grew = false;
    for (const id of state.order) {
      if (seen.has(id)) continue;
      const s = state.sessions[id];
      if (!s || !reached.has(s.initiatorId)) continue;
      seen.add(id);
      reached.add(s.responderId);
      grew = true;
      if (isBusy(s.status)) busy.push(s);
    }
  }
  if (busy.length === 0) return null;
  busy.sort((a, b) => (a.lastActivity < b.lastActivity ? 1 : -1));
  const top = busy[0]!;
  const lead = theme.plain ? 'working:' : '↳';
  const more = busy.length > 1 ? ` (+${busy.length - 1} more)` : '';
  return `${lead} ${top.initiatorId} ${theme.arrow} ${top.responderId} ${theme.dot} ${top.name}  ${spinner ? `${spinner} ` : ''}${statusText(top.status, top.detail)}${more}`;
}
