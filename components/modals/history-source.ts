import { createContext } from 'react';
import type { LegionCore } from '../../src/runtime/core-api';
import type { Layout } from '../../src/storage/layout';
import { createRunStore } from '../../src/session/run-store';
import { readRunSessions, readSessionFile } from '../../src/session/session-files';
import { parseSessionId } from '../../src/session/ids';
import { transcriptLines, type TranscriptLine } from '../../src/session/transcript';
import { searchRunHistory, searchSessions, type HistorySearchResult } from '../../src/session/history-search';

/**
 * Where the history browser reads from. The current run comes from the core (live, what the
 * lanes show); other runs from their files, read-only (`readRunSessions` never writes, so a
 * run another Legion process holds is safe to browse). `switchRun` resumes another run in
 * the app; start-tui provides it (closing this run's core, composing the other) — without it,
 * older runs are browsed read-only.
 */
export interface RunSummary {
  readonly id: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly title?: string;
  readonly sessionCount: number;
}

export interface SessionSummary {
  readonly id: string;
  readonly initiatorId: string;
  readonly responderId: string;
  readonly name: string;
  readonly messageCount: number;
  readonly lastActivity: string;
}

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

/** null: the browser builds a core-only source (the current run alone). */
export const HistorySourceContext = createContext<HistorySource | null>(null);

const recentFirst = (a: SessionSummary, b: SessionSummary): number =>
  a.lastActivity < b.lastActivity ? 1 : a.lastActivity > b.lastActivity ? -1 : a.id < b.id ? -1 : 1;

function currentRunSummary(core: LegionCore): RunSummary {
  const sessions = core.sessions();
  const times = sessions.map((s) => s.lastActivity).sort();
  const now = new Date().toISOString();
  return { id: core.runId, createdAt: times[0] ?? now, updatedAt: times[times.length - 1] ?? now, sessionCount: sessions.length };
}

function coreSessions(core: LegionCore): SessionSummary[] {
  return core.sessions().map((s) => ({
    id: s.id, initiatorId: s.initiatorId, responderId: s.responderId, name: s.name, messageCount: s.messageCount, lastActivity: s.lastActivity,
  })).sort(recentFirst);
}

function coreTranscript(core: LegionCore, sessionId: string): TranscriptLine[] {
  const key = parseSessionId(sessionId);
  return key ? transcriptLines(key, core.history(sessionId), core.contextRecords?.(sessionId) ?? []) : [];
}

function coreSearch(core: LegionCore, query: string): HistorySearchResult {
  const sessions = core.sessions().flatMap((s) => {
    const key = parseSessionId(s.id);
    return key ? [{ id: s.id, key, messages: core.history(s.id) }] : [];
  }).sort((a, b) => (a.id < b.id ? -1 : 1));
  return searchSessions(sessions, query);
}

/** The current run only, from the core (tests, or a front end without a workspace). */
export function coreHistorySource(core: LegionCore): HistorySource {
  return {
    currentRunId: core.runId,
    listRuns: async () => [currentRunSummary(core)],
    listSessions: async () => coreSessions(core),
    transcript: async (_runId, sessionId) => coreTranscript(core, sessionId),
    search: async (_runId, query) => coreSearch(core, query),
  };
}

/** Every run of the workspace (`layout`), the current one live from `core`. */
export function createHistorySource(options: { layout: Layout; core: LegionCore; switchRun?: (runId: string, sessionId?: string) => void }): HistorySource {
  const { layout, core } = options;
  const runs = createRunStore(layout, () => new Date(), () => 'unused');
  const isCurrent = (runId: string): boolean => runId === core.runId;
  return {
    currentRunId: core.runId,
    ...(options.switchRun ? { switchRun: options.switchRun } : {}),
    async listRuns() {
      const listed: RunSummary[] = (await runs.list()).map((r) => ({
        id: r.id, createdAt: r.createdAt, updatedAt: r.updatedAt, sessionCount: r.sessionCount, ...(r.title ? { title: r.title } : {}),
      }));
      const current = currentRunSummary(core);
      const onDisk = listed.find((r) => isCurrent(r.id));
      if (!onDisk) return [current, ...listed];
      return listed.map((r) => (isCurrent(r.id) ? { ...r, sessionCount: current.sessionCount } : r));
    },
    async listSessions(runId) {
      if (isCurrent(runId)) return coreSessions(core);
      const { sessions } = await readRunSessions(layout, runId);
      return sessions.map((s) => ({
        id: s.id, initiatorId: s.key.initiatorId, responderId: s.key.responderId, name: s.key.name, messageCount: s.messages.length,
        lastActivity: s.messages[s.messages.length - 1]?.at ?? s.fileTime ?? '',
      })).sort(recentFirst);
    },
    async transcript(runId, sessionId) {
      if (isCurrent(runId)) return coreTranscript(core, sessionId);
      const read = await readSessionFile(layout, runId, sessionId);
      return read ? transcriptLines(read.key, read.messages, read.records) : [];
    },
    async search(runId, query) {
      return isCurrent(runId) ? coreSearch(core, query) : searchRunHistory(layout, runId, query);
    },
  };
}
