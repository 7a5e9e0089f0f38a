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
  const usage = core.usage?.();
  for (const info of core.sessions()) {
    const used = usage?.sessions[info.id];
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
    ...(usage ? { totals: viewTotals(usage.run) } : {}),
  };
}

/** The UI's figures of core totals: all tokens counted (as `usage` events are), the known cost. */
function viewTotals(t: UsageTotals): { tokens: number; costUsd: number; costKnown: boolean } {
  return { tokens: t.inputTokens + t.outputTokens + t.cacheReadTokens + t.cacheWriteTokens, costUsd: t.costUsd ?? 0, costKnown: !t.partial };
}
