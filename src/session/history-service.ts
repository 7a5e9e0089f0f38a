import type { Layout } from '../storage/layout';
import type { Message } from '../model/message';
import type { ContextRecord } from '../context/records';
import { createRunStore } from './run-store';
import { readRunSessions, readSessionFile } from './session-files';
import { parseSessionId } from './ids';
import { transcriptLines, type TranscriptLine } from './transcript';
import type { KeyArgumentOf } from '../tools/key-argument';
import { searchRunHistory, searchSessions, type HistorySearchResult } from './history-search';

/**
 * What the history browser reads (docs/serve.md#history), on the core's side of the
 * interface: every run of the workspace, the current one live from the running core (what the
 * lanes show), the others from their files, read-only (`readRunSessions` never writes, so a run
 * another Legion process holds is safe to browse). A front end reaches it as the named service
 * beside the core (`ScreenSession.history`, src/runtime/core-api.ts), in-process or attached.
 */
/** A run as the history browser lists it. */
export interface RunSummary {
  readonly id: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly title?: string;
  readonly sessionCount: number;
}

/** A session of any run, as the history browser lists it. */
export interface SessionSummary {
  readonly id: string;
  readonly initiatorId: string;
  readonly responderId: string;
  readonly name: string;
  readonly messageCount: number;
  readonly lastActivity: string;
}

/** The live run, as the core shows it. */
export interface LiveRun {
  readonly runId: string;
  sessions(): readonly { id: string; initiatorId: string; responderId: string; name: string; messageCount: number; lastActivity: string }[];
  history(sessionId: string): readonly Message[];
  contextRecords?(sessionId: string): readonly ContextRecord[];
}

export interface HistoryService {
  runs(): Promise<RunSummary[]>;
  runSessions(runId: string): Promise<SessionSummary[]>;
  transcript(runId: string, sessionId: string): Promise<TranscriptLine[]>;
  searchHistory(runId: string, query: string): Promise<HistorySearchResult>;
}

const recentFirst = (a: SessionSummary, b: SessionSummary): number =>
  a.lastActivity < b.lastActivity ? 1 : a.lastActivity > b.lastActivity ? -1 : a.id < b.id ? -1 : 1;

function liveSummary(live: LiveRun): RunSummary {
  const sessions = live.sessions();
  const times = sessions.map((s) => s.lastActivity).sort();
  const now = new Date().toISOString();
  return { id: live.runId, createdAt: times[0] ?? now, updatedAt: times[times.length - 1] ?? now, sessionCount: sessions.length };
}

function liveSessions(live: LiveRun): SessionSummary[] {
  return live.sessions().map((s) => ({
    id: s.id, initiatorId: s.initiatorId, responderId: s.responderId, name: s.name, messageCount: s.messageCount, lastActivity: s.lastActivity,
  })).sort(recentFirst);
}

function liveTranscript(live: LiveRun, sessionId: string, keyOf: KeyArgumentOf): TranscriptLine[] {
  const key = parseSessionId(sessionId);
  return key ? transcriptLines(key, live.history(sessionId), keyOf, live.contextRecords?.(sessionId) ?? []) : [];
}

function liveSearch(live: LiveRun, query: string, keyOf: KeyArgumentOf): HistorySearchResult {
  const sessions = live.sessions().flatMap((s) => {
    const key = parseSessionId(s.id);
    return key ? [{ id: s.id, key, messages: live.history(s.id) }] : [];
  }).sort((a, b) => (a.id < b.id ? -1 : 1));
  return searchSessions(sessions, query, keyOf);
}

/** The current run only (a core without a workspace on disk: tests, fakes). `keyOf`: a tool call's key argument in transcripts. */
export function liveHistory(live: LiveRun, keyOf: KeyArgumentOf): HistoryService {
  return {
    runs: async () => [liveSummary(live)],
    runSessions: async () => liveSessions(live),
    transcript: async (_runId, sessionId) => liveTranscript(live, sessionId, keyOf),
    searchHistory: async (_runId, query) => liveSearch(live, query, keyOf),
  };
}

/** Every run of the workspace (`layout`), the current one live. `keyOf`: a tool call's key argument in transcripts. */
export function createHistoryService(layout: Layout, live: LiveRun, keyOf: KeyArgumentOf): HistoryService {
  const runs = createRunStore(layout, () => new Date(), () => 'unused');
  const isCurrent = (runId: string): boolean => runId === live.runId;
  return {
    async runs() {
      const listed: RunSummary[] = (await runs.list()).map((r) => ({
        id: r.id, createdAt: r.createdAt, updatedAt: r.updatedAt, sessionCount: r.sessionCount, ...(r.title ? { title: r.title } : {}),
      }));
      const current = liveSummary(live);
      if (!listed.some((r) => isCurrent(r.id))) return [current, ...listed];
      return listed.map((r) => (isCurrent(r.id) ? { ...r, sessionCount: current.sessionCount } : r));
    },
    async runSessions(runId) {
      if (isCurrent(runId)) return liveSessions(live);
      const { sessions } = await readRunSessions(layout, runId);
      return sessions.map((s) => ({
        id: s.id, initiatorId: s.key.initiatorId, responderId: s.key.responderId, name: s.key.name, messageCount: s.messages.length,
        lastActivity: s.messages[s.messages.length - 1]?.at ?? s.fileTime ?? '',
      })).sort(recentFirst);
    },
    async transcript(runId, sessionId) {
      if (isCurrent(runId)) return liveTranscript(live, sessionId, keyOf);
      const read = await readSessionFile(layout, runId, sessionId);
      return read ? transcriptLines(read.key, read.messages, keyOf, read.records) : [];
    },
    async searchHistory(runId, query) {
      return isCurrent(runId) ? liveSearch(live, query, keyOf) : searchRunHistory(layout, runId, query, keyOf);
    },
  };
}
