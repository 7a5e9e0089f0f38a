import type { WorkflowEnd, WorkflowEvent } from '../../src/events/types';
import type { UiState, WorkflowView } from './ui-state';
import { placeLane } from './lanes';

/** Workflow progress for the status bar (docs/workflows.md, "TUI"): steps ended of all, and the cost of the steps' sessions. */
export function reduceWorkflow(state: UiState, event: WorkflowEvent): UiState {
  const all = state.workflows ?? {};
  const current = all[event.workflowId];
  const put = (view: WorkflowView): UiState => ({ ...state, workflows: { ...all, [event.workflowId]: view } });
  switch (event.type) {
    case 'workflow-start':
      // A resumed workflow (after a restart) starts from the steps that ended and the money spent before it.
      return put({
        name: event.name, total: event.steps.length, ended: event.ended ?? current?.ended ?? [], sessions: current?.sessions ?? [],
        spentUsd: event.spentUsd ?? current?.spentUsd ?? 0, status: 'running',
      });
    case 'workflow-step-start': {
      // A running step shows in a lane, as a session the user's work sets off does (also when its session existed already).
      const shown = state.sessions[event.sessionId] && (state.settings.autoOpenLanes || state.lanes.length === 0)
        ? placeLane(state, event.sessionId, { focus: false, force: false })
        : state;
      if (!current || current.sessions.includes(event.sessionId)) return shown;
      return { ...shown, workflows: { ...all, [event.workflowId]: { ...current, sessions: [...current.sessions, event.sessionId] } } };
    }
    case 'workflow-step-end':
      if (!current || current.ended.includes(event.stepId)) return state;
      return put({ ...current, ended: [...current.ended, event.stepId] });
    case 'workflow-end':
      if (!current) return state;
      return put({ ...current, status: event.status satisfies WorkflowEnd, spentUsd: event.spentUsd });
  }
}

/** A `usage` event of a step's session adds to its workflow's cost. */
export function addWorkflowUsage(state: UiState, sessionId: string, costUsd: number | null): UiState {
  if (!state.workflows || costUsd === null) return state;
  let changed = false;
  const next: Record<string, WorkflowView> = {};
  for (const [id, view] of Object.entries(state.workflows)) {
    if (view.status === 'running' && view.sessions.includes(sessionId)) {
      next[id] = { ...view, spentUsd: view.spentUsd + costUsd };
      changed = true;
    } else next[id] = view;
  }
  return changed ? { ...state, workflows: next } : state;
}

/** `review-pr 2/4 · $0.31` for each running workflow (`dot`: the theme's separator). */
export function workflowProgressText(state: UiState, dot = '·'): string | null {
  const running = Object.values(state.workflows ?? {}).filter((w) => w.status === 'running');
  if (running.length === 0) return null;
  return running.map((w) => `${w.name} ${w.ended.length}/${w.total} ${dot} $${w.spentUsd.toFixed(2)}`).join('  ');
}
