import { createContext } from 'react';
import type { LegionCore, RunSummary, SessionSummary, TranscriptLine, HistorySearchResult } from '../../src/runtime/core-api';

export type { RunSummary, SessionSummary } from '../../src/runtime/core-api';

/**
 * Where the history browser reads from: the core's interface only (`runs`, `runSessions`,
 * `transcript`, `searchHistory` of `LegionCore`), so the browser works the same on an attached
 * core whose workspace is on another machine (docs/serve.md#history). `switchRun` resumes
 * another run in the app; start-tui provides it when the core is in-process — without it,
 * older runs are browsed read-only.
 */
export interface HistorySource {
  readonly currentRunId: string;
  /** Newest first; the current run is always there. */
  listRuns(): Promise<RunSummary[]>;
  /** Most recently active first. */
  listSessions(runId: string): Promise<SessionSummary[]>;
  transcript(runId: string, sessionId: string): Promise<TranscriptLine[]>;
  search(runId: string, query: string): Promise<HistorySearchResult>;
  /** Resume `runId` in the app and show `sessionId` in a lane. */
  readonly switchRun?: (runId: string, sessionId?: string) => void;
}

/** null: the browser builds a source from the core it has. */
export const HistorySourceContext = createContext<HistorySource | null>(null);

const noHistory = (): Promise<never> => Promise.reject(new Error('this core keeps no run history'));

/** The history of `core`'s workspace, through its interface. */
export function createHistorySource(options: { core: LegionCore; switchRun?: (runId: string, sessionId?: string) => void }): HistorySource {
  const { core } = options;
  return {
    currentRunId: core.runId,
    ...(options.switchRun ? { switchRun: options.switchRun } : {}),
    listRuns: () => (core.runs ? core.runs() : noHistory()),
    listSessions: (runId) => (core.runSessions ? core.runSessions(runId) : noHistory()),
    transcript: (runId, sessionId) => (core.transcript ? core.transcript(runId, sessionId) : noHistory()),
    search: (runId, query) => (core.searchHistory ? core.searchHistory(runId, query) : noHistory()),
  };
}
