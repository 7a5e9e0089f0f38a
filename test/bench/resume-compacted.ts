/**
 * The `resume` benchmark's second scenario (docs/context.md, "Resume"): a run whose sessions
 * were compacted many times. 20 sessions × 1,000 messages (the same 20,000 messages as the
 * plain scenario, same shapes), each compacted 20 times (a ~3 kB summary every 45 messages,
 * an eviction line before each), so each file carries 40 context lines and its request starts
 * at the last compaction's `firstKept` (888 of 1,000 messages).
 *
 * Figures:
 * - compactedReadyMs: found, locked and loaded (every line read and validated, context lines
 *   included), median over repeated loads — judged against the resume budget (≤ 300 ms);
 * - compactedFirstEstimateMs: the first request estimate of all 20 sessions after the load
 *   (what each session's first provider call computes once), which walks only the summary and
 *   the messages from `firstKept` on; uncompactedFirstEstimateMs: the same for the same
 *   messages without their context lines (whole histories), for comparison;
 * - cachedDecideMicros: a later decision for one session (the first estimate is kept: only
 *   messages appended since are measured);
 * - sentMessages: messages in a resumed session's request (the summary + the kept tail).
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { Message } from '../../src/model/message';
import type { ContextRecord } from '../../src/context/records';
import { createContextManager, type ContextSession } from '../../src/context/manager';
import { requestView } from '../../src/context/view';
import type { Layout } from '../../src/storage/layout';
import { createRunStore } from '../../src/session/run-store';
import { acquireRunLock } from '../../src/session/lock';
import { sessionIdOf } from '../../src/session/ids';
import { gc, stats } from './harness';

export const COMPACTIONS = 20;
const EVERY = 45;

/** Where a compaction after `n` messages keeps the tail from: ~10 back, at a user text (never a tool result). */
const keptFor = (n: number): number => {
  let k = n - 10;
  while (k % 4 !== 0) k--;
  return k;
};

/** One session file: `count` messages from `message`, a compaction (and an eviction before it) every 45. */
export function writeCompactedSession(file: string, s: number, count: number, message: (s: number, i: number) => Message, compacted: boolean): number {
  let text = '';
  for (let i = 0; i < count; i++) {
    text += JSON.stringify(message(s, i)) + '\n';
    const n = i + 1;
    if (compacted && n % EVERY === 0 && n <= COMPACTIONS * EVERY) {
      const at = new Date(Date.UTC(2026, 10, 21, 9, 0, 0) + s * 60_000 + i * 1000).toISOString();
      const eviction: ContextRecord = { type: 'eviction', at, before: n - 10, tokensBefore: 60_000, tokensAfter: 41_000 };
      const summary = `## Goal\nFix the trailing-comma handling of session ${s}.\n## Decisions\n${'- the list parser keeps accepting trailing commas; the object parser gets the same rule.\n'.repeat(20)}## Files\n${'- src/parser/part-N.ts: read, patched, tests added.\n'.repeat(20)}## Open tasks\n- compaction ${n / EVERY}: review the patch.\n`;
      const compaction: ContextRecord = { type: 'compaction', at, summary, firstKept: keptFor(n), tokensBefore: 41_000, tokensAfter: 9_000 };
      text += JSON.stringify(eviction) + '\n' + JSON.stringify(compaction) + '\n';
    }
  }
  writeFileSync(file, text);
  return statSync(file).size;
}

export interface CompactedFigures {
  compactedReadyMs: number;
  compactedFirstEstimateMs: number;
  uncompactedFirstEstimateMs: number;
  cachedDecideMicros: number;
  sentMessages: number;
  compactedMegabytes: number;
}

const SETTINGS = { defaultWindow: 200_000, compactAt: 0.6, keepRecent: 0.3, evictToolResultsOver: 4000 };
const SYSTEM = 'You are a careful engineer. '.repeat(40);
const TOOLS = [{ name: 'file_read', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }];

/** Time the first estimate of every session (a fresh context manager, as after a restart). */
function firstEstimates(sessions: readonly ContextSession[]): { ms: number; cachedMicros: number } {
  const manager = createContextManager({ settings: SETTINGS, windowOf: () => 200_000, emit: () => {}, notice: () => {}, now: () => '' });
  gc();
  const t0 = performance.now();
  for (const session of sessions) manager.decide({ session, system: SYSTEM, tools: TOOLS, model: 'bench' });
  const ms = performance.now() - t0;
  const rounds = 2000;
  const t1 = performance.now();
  for (let i = 0; i < rounds; i++) manager.decide({ session: sessions[i % sessions.length]!, system: SYSTEM, tools: TOOLS, model: 'bench' });
  return { ms, cachedMicros: ((performance.now() - t1) * 1000) / rounds };
}

export async function runCompacted(layout: Layout, message: (s: number, i: number) => Message, smoke: boolean): Promise<CompactedFigures> {
  const sessions = smoke ? 4 : 20;
  const perSession = 1000;
  const repeats = smoke ? 3 : 15;
  const runId = '2026-11-21T09-00-00-bench2';
  mkdirSync(layout.sessionsDir(runId), { recursive: true });
  writeFileSync(layout.runFile(runId), JSON.stringify({ version: 1, id: runId, createdAt: new Date().toISOString(), updatedAt: new Date().toISOString() }));
  let bytes = 0;
  for (let s = 0; s < sessions; s++) {
    const id = sessionIdOf({ initiatorId: 'ur-agent', responderId: `agent-${s}`, name: 'default' });
    bytes += writeCompactedSession(layout.sessionFile(runId, id), s, perSession, message, true);
  }
  const runs = createRunStore(layout, () => new Date(), () => 'x');
  const samples: number[] = [];
  let loadedSessions: ContextSession[] = [];
  for (let i = 0; i < repeats; i++) {
    gc();
    const t0 = performance.now();
    const run = await runs.get(runId);
    const lock = acquireRunLock(layout, run!.id, { pid: process.pid, hostname: hostname(), now: new Date() });
    if (!lock.ok) throw new Error(lock.error);
    const loaded = await runs.load(run!, new Date());
    samples.push(performance.now() - t0);
    lock.lock.release();
    if (loaded.issues.length > 0) throw new Error(`unexpected issues: ${loaded.issues[0]!.message}`);
    loadedSessions = loaded.sessions.list();
  }
  const first = loadedSessions[0]!;
  if (first.contextRecords().length !== COMPACTIONS * 2) throw new Error(`expected ${COMPACTIONS * 2} context lines, got ${first.contextRecords().length}`);
  const compacted = firstEstimates(loadedSessions);
  // The same histories without their context lines: the whole history is the request.
  const bare: ContextSession[] = loadedSessions.map((s) => ({ ...s, id: `${s.id}-bare`, key: s.key, messages: () => s.messages(), contextRecords: () => [], appendContext: () => {} }));
  const uncompacted = firstEstimates(bare);
  const manager = createContextManager({ settings: SETTINGS, windowOf: () => 200_000, emit: () => {}, notice: () => {}, now: () => '' });
  const state = manager.stateOf(first);
  if (state.firstKept !== keptFor(COMPACTIONS * EVERY)) throw new Error(`the request should start at the last compaction's firstKept (${keptFor(COMPACTIONS * EVERY)}), not ${state.firstKept}`);
  const sent = requestView(first.messages(), state, SETTINGS.evictToolResultsOver).length;
  return {
    compactedReadyMs: stats(samples.slice(1)).median,
    compactedFirstEstimateMs: compacted.ms,
    uncompactedFirstEstimateMs: uncompacted.ms,
    cachedDecideMicros: compacted.cachedMicros,
    sentMessages: sent,
    compactedMegabytes: bytes / 1e6,
  };
}
