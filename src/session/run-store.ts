import { mkdir, readdir } from 'node:fs/promises';
import { planRepair } from '../model/repair';
import { toolUsesOf } from '../model/message';
import { LegionError, messageOf } from '../errors';
import { writeJsonAtomic } from '../storage/atomic';
import { PRIVATE_DIR_MODE } from '../storage/private-mode';
import { appendJsonl, type JsonlIssue } from '../storage/jsonl';
import type { Layout } from '../storage/layout';
import { isSafeRunId, makeRunId, type Clock, type IdSource } from './ids';
import { readRunFile, runFileContent } from './run-file';
import { fixTail, readRunSessions, type SessionFileRead } from './session-files';
import { createSessionStore, type SessionSeed } from './session-store';
import type { LoadedRun, LoadOptions, OpenCalls, RunRecord, RunStore } from './types';
import { surelyAbsent } from '../storage/absent';

/** A run as listed: its record plus the number of session files. */
export interface RunListing extends RunRecord {
  readonly sessionCount: number;
}

/** A run folder whose run.json cannot be read; `error` names the file. */
export interface DamagedRun {
  readonly runId: string;
  readonly error: string;
}

export interface RunScan {
  /** Newest first (createdAt, then id). */
  readonly runs: RunListing[];
  readonly damaged: DamagedRun[];
}

/** The file-backed RunStore, with the read-only extras `legion runs`/`show` use. */
export interface FileRunStore extends RunStore {
  /** Newest first; damaged runs are left out (see `scan`). */
  list(): Promise<RunListing[]>;
  /** Every run folder: readable runs newest first, and the damaged ones. Never writes. */
  scan(): Promise<RunScan>;
  /** Like `load`, but writes nothing: repairs are applied in memory only and `append` is refused. */
  inspect(run: RunRecord, now: Date): Promise<LoadedRun>;
}

function newestFirst(a: RunRecord, b: RunRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? 1 : -1;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}

async function countSessions(layout: Layout, runId: string): Promise<number> {
  if (surelyAbsent(layout.sessionsDir(runId))) return 0;
  try {
    return (await readdir(layout.sessionsDir(runId))).filter((n) => n.endsWith('.jsonl')).length;
  } catch {
    return 0;
  }
}

/**
 * Runs of a workspace under `.legion/runs/`. Run ids sort by creation time
 * (`makeRunId(now, ids())`); `clock` dates sessions opened without messages.
 * `load` requires that the caller holds the run lock (`acquireRunLock`): it appends repairs,
 * except for sessions its `leaveOpen` option leaves open (listed in `LoadedRun.leftOpen`).
 */
export function createRunStore(layout: Layout, clock: Clock, ids: IdSource): FileRunStore {
  async function scan(): Promise<RunScan> {
    const { runs, damaged } = await readRuns();
    return { runs: await Promise.all(runs.map(async (run) => ({ ...run, sessionCount: await countSessions(layout, run.id) }))), damaged };
  }

  /** Every run folder's run file: readable runs newest first, and the damaged ones (`scan` without the session counts, which `latest` does not need). */
  async function readRuns(): Promise<{ runs: RunRecord[]; damaged: DamagedRun[] }> {
    let names: string[];
    try {
      names = (await readdir(layout.runsDir, { withFileTypes: true })).filter((d) => d.isDirectory()).map((d) => d.name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { runs: [], damaged: [] };
      throw error;
    }
    const runs: RunRecord[] = [];
    const damaged: DamagedRun[] = [];
    await Promise.all(
      names.filter(isSafeRunId).map(async (runId) => {
        try {
          const run = await readRunFile(layout.runFile(runId), runId);
          if (run) runs.push(run);
        } catch (error) {
          damaged.push({ runId, error: messageOf(error) });
        }
      }),
    );
    runs.sort(newestFirst);
    damaged.sort((a, b) => (a.runId < b.runId ? 1 : -1));
    return { runs, damaged };
  }

  async function read(run: RunRecord, now: Date, write: boolean, options: LoadOptions = {}): Promise<LoadedRun> {
    const { sessions: files, issues: strayIssues } = await readRunSessions(layout, run.id);
    const issues: JsonlIssue[] = [...strayIssues];
    const repairs: { sessionId: string; answered: string[] }[] = [];
    const leftOpen: OpenCalls[] = [];
    const seeds: SessionSeed[] = [];
    const at = now.toISOString();
    const plans = files.map((file) => planRepair(file.messages, at));
    const open: OpenCalls[] = [];
    files.forEach((file, i) => {
      const last = file.messages[file.messages.length - 1];
      if (plans[i]!.append.length > 0 && last) open.push({ sessionId: file.id, key: file.key, toolUseIds: plans[i]!.answered, uses: toolUsesOf(last) });
    });
    const keep = open.length > 0 && options.leaveOpen ? options.leaveOpen(open) : new Set<string>();
    files.forEach((file, i) => {
      const plan = plans[i]!;
      issues.push(...file.issues);
      for (const problem of plan.problems) {
        issues.push({ file: file.file, line: 0, kind: 'invalid', message: `${file.file}: ${problem} (kept; left out of what providers are sent)` });
      }
      if (write) fixTail(file);
      if (plan.append.length > 0 && keep.has(file.id)) {
        leftOpen.push(open.find((o) => o.sessionId === file.id)!);
      } else if (plan.append.length > 0) {
        if (write) appendJsonl(file.file, ...plan.append);
        file.messages.push(...plan.append);
        repairs.push({ sessionId: file.id, answered: plan.answered });
      }
      seeds.push(seedOf(file));
    });
    const sessions = createSessionStore(layout, run.id, { clock, seeds, readOnly: !write, ...(options.writtenElsewhere ? { writtenElsewhere: true } : {}) });
    return { run, sessions, issues, repairs, leftOpen };
  }

  const store: FileRunStore = {
    async create(now) {
      await mkdir(layout.runsDir, { recursive: true, mode: PRIVATE_DIR_MODE });
      for (let attempt = 0; ; attempt++) {
        const id = makeRunId(now, ids());
        try {
          await mkdir(layout.runDir(id), { mode: PRIVATE_DIR_MODE });
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'EEXIST' && attempt < 5) continue;
          throw error;
        }
        const run: RunRecord = { version: 1, id, createdAt: now.toISOString(), updatedAt: now.toISOString() };
        await writeJsonAtomic(layout.runFile(id), run);
        return run;
      }
    },
    async latest() {
      const { runs, damaged } = await readRuns();
      const newest = runs[0] ?? null;
      // A damaged run newer than every readable one is what "resume the latest" means: refuse
      // to silently resume an older run instead.
      const newer = damaged.find((d) => newest === null || d.runId > newest.id);
      if (newer) throw new LegionError(newer.error);
      return newest;
    },
    async get(runId) {
      if (!isSafeRunId(runId)) return null;
      return readRunFile(layout.runFile(runId), runId);
    },
    async list() {
      return (await scan()).runs;
    },
    scan,
    async save(run) {
      await writeJsonAtomic(layout.runFile(run.id), runFileContent(run));
    },
    load: (run, now, options) => read(run, now, true, options),
    inspect: (run, now) => read(run, now, false),
  };
  return store;
}

function seedOf(file: SessionFileRead): SessionSeed {
  return { key: file.key, messages: file.messages, records: file.records, fileTime: file.fileTime };
}
