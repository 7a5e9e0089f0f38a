import type { LegionCore } from '../../src/runtime/core-api';
import type { UsageTotals } from '../../src/providers/usage-totals';
import type { SessionView, UiSettings, UiState } from './ui-state';
import { initialUiState, isUserSession } from './ui-state';

/**
 * The UI state of a run as the core knows it now (start and resume): every session with its
 * history (the message objects are shared; the list is copied, since the core's is live and
 * keeps growing, while the UI's grows by `message-add`), pending approvals, participants,
 * token and cost totals of the run and of each session since the run began (`core.usage`,
 * restarts included; `usage` events add to them). Lanes: the user's sessions first, then the
 * most recently active others, up to `maxLanes`.
 */
export function stateFromCore(core: LegionCore, settings: UiSettings, resumed: boolean): UiState {
  const base = initialUiState(core.runId, settings);
  const sessions: Record<string, SessionView> = {};
  const order: string[] = [];
  const usage = core.usage();
  for (const info of core.sessions()) {
    const used = usage.sessions[info.id];
    sessions[info.id] = {
      id: info.id, initiatorId: info.initiatorId, responderId: info.responderId, name: info.name,
      status: info.status, entries: core.history(info.id).slice(), streaming: '', streamEpoch: 0, tools: {},
      ...(used ? viewTotals(used) : { tokens: 0, costUsd: 0, costKnown: true }),
      lastActivity: info.lastActivity,
    };
    order.push(info.id);
  }
  const pending = core.pendingApprovals();
  for (const request of pending) {
    const s = sessions[request.sessionId];
    if (!s) continue;
    const tools = { ...s.tools, [request.toolUseId]: { name: request.toolName, input: request.input, state: 'waiting-approval' as const } };
    sessions[request.sessionId] = { ...s, tools };
  }
  const recent = (a: SessionView, b: SessionView): number => (a.lastActivity < b.lastActivity ? 1 : a.lastActivity > b.lastActivity ? -1 : 0);
  const all = Object.values(sessions);
  const mine = all.filter(isUserSession).sort(recent);
  const others = all.filter((s) => !isUserSession(s)).sort(recent);
  const lanes = [...mine, ...others].slice(0, settings.maxLanes).map((s) => s.id);
  return {
    ...base,
    resumed,
    sessions,
    order,
    lanes,
    focus: 0,
    pending: Object.fromEntries(pending.map((p) => [p.requestId, p])),
    participants: core.participants(),
    totals: viewTotals(usage.run),
  };
}

/** The UI's figures of core totals: all tokens counted (as `usage` events are), the known cost. */
function viewTotals(t: UsageTotals): { tokens: number; costUsd: number; costKnown: boolean } {
  return { tokens: t.inputTokens + t.outputTokens + t.cacheReadTokens + t.cacheWriteTokens, costUsd: t.costUsd ?? 0, costKnown: !t.partial };
}

/**
 * The state after the core replaced its own (an attached core that missed events,
 * docs/serve.md#attaching): sessions, histories, pending requests, participants and totals are
 * `fresh`'s, the core's now; what is the user's is kept: the lanes still known (in their order,
 * the focused one still focused; sessions the server does not list yet, like an unused home
 * session, stay as they were), drafts and scroll positions, the open modal, sent texts, notices.
 */
export function resyncState(previous: UiState, fresh: UiState): UiState {
  const sessions: Record<string, SessionView> = { ...fresh.sessions };
  const order = [...fresh.order];
  for (const id of previous.lanes) {
    const kept = previous.sessions[id];
    if (!sessions[id] && kept && kept.entries.length === 0) { sessions[id] = kept; order.push(id); }
  }
  const lanes = previous.lanes.filter((id) => sessions[id] !== undefined);
  for (const id of fresh.lanes) if (lanes.length < previous.settings.maxLanes && !lanes.includes(id)) lanes.push(id);
  const focusedId = previous.lanes[previous.focus];
  const focus = Math.max(0, focusedId === undefined ? 0 : lanes.indexOf(focusedId));
  return {
    ...previous,
    sessions, order, lanes, focus,
    pending: fresh.pending, participants: fresh.participants, totals: fresh.totals,
    ended: fresh.ended ?? previous.ended,
  };
}
