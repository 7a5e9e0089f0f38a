import type { HistoryService } from '../../src/runtime/core-api';

export type { RunSummary, SessionSummary } from '../../src/runtime/core-api';

/**
 * Where the history browser reads from: the history service beside the core
 * (`ScreenSession.history`), so the browser works the same on an attached core whose workspace
 * is on another machine (docs/serve.md#history). `switchRun` resumes another run in the app;
 * run-tui provides it when the core is in-process — without it, older runs are browsed read-only.
 */
export interface HistorySource extends HistoryService {
  readonly currentRunId: string;
  /** Resume `runId` in the app and show `sessionId` in a lane. */
  readonly switchRun?: (runId: string, sessionId?: string) => void;
}

export function createHistorySource(options: { runId: string; history: HistoryService; switchRun?: (runId: string, sessionId?: string) => void }): HistorySource {
  const { history } = options;
  return {
    currentRunId: options.runId,
    ...(options.switchRun ? { switchRun: options.switchRun } : {}),
    runs: () => history.runs(),
    runSessions: (runId) => history.runSessions(runId),
    transcript: (runId, sessionId) => history.transcript(runId, sessionId),
    searchHistory: (runId, query) => history.searchHistory(runId, query),
  };
}
