import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { writeJsonAtomic } from '../storage/atomic';
import { createUsageAccumulator, type UsageRecord, type UsageTotals } from '../providers/usage-totals';
import { messageOf } from '../errors';
import { lazySchema } from '../storage/lazy-schema';
import { surelyAbsent } from '../storage/absent';

/** Token and cost totals of a run and of each of its sessions, since the run began. */
export interface RunUsage {
  readonly run: UsageTotals;
  readonly sessions: Readonly<Record<string, UsageTotals>>;
}

/** `runs/<runId>/usage.json`; built at its first use (a run's totals read back). */
const fileSchema = lazySchema(() => {
  const count = z.number().int().min(0);
  const totalsSchema = z.strictObject({
    calls: count,
    inputTokens: count,
    outputTokens: count,
    cacheReadTokens: count,
    cacheWriteTokens: count,
    costUsd: z.number().min(0).nullable(),
    partial: z.boolean(),
    unpricedModels: z.array(z.string()),
  });

  return z.strictObject({
    version: z.literal(1),
    run: totalsSchema,
    sessions: z.record(z.string(), totalsSchema),
  });
});

/**
 * Read a run's usage totals back. No file (a new run, or one from before this file existed):
 * null. A damaged file: null and `issue`, a one-line notice saying the totals start again
 * from zero (the file is replaced at the next write; nothing else depends on it).
 */
export async function readRunUsage(file: string): Promise<{ usage: RunUsage | null; issue?: string }> {
  if (surelyAbsent(file)) return { usage: null };
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { usage: null };
    return { usage: null, issue: `could not read ${file} (${messageOf(error)}): token and cost totals start again from zero` };
  }
  const damaged = (why: string) => ({ usage: null, issue: `${file} is damaged (${why}): token and cost totals start again from zero` });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return damaged('not valid JSON');
  }
  const parsed = fileSchema().safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return damaged(first ? `${first.path.join('.') || '(root)'}: ${first.message}` : 'invalid');
  }
  return { usage: { run: parsed.data.run, sessions: parsed.data.sessions } };
}

/** The usage totals of one run, fed with its `usage` events and kept on disk. */
export interface UsageBook {
  add(record: UsageRecord): void;
  totals(): RunUsage;
  /** Write the totals now if they changed since the last write (writes never overlap). */
  flush(): Promise<void>;
  /** Stop the pending timer and write what is left. */
  close(): Promise<void>;
}

export interface UsageBookOptions {
  readonly file: string;
  /** The totals read back on resume (null: start from zero). */
  readonly seed: RunUsage | null;
  /** A change is written at most this long after it happens (default 1000 ms); `close` writes at once. */
  readonly delayMs?: number;
  /** A failed write (reported once until a write succeeds again). */
  readonly onError: (message: string) => void;
}

/**
 * Totals per session and per run (`createUsageAccumulator`), written atomically to
 * `runs/<runId>/usage.json` at most once per `delayMs` while usage comes in and once at
 * `close` (shutdown). A crash loses at most the last `delayMs` of usage; a turn's figures are
 * on disk within `delayMs` of its last model call. The timer never keeps the process alive.
 */
export function createUsageBook(options: UsageBookOptions): UsageBook {
  const delayMs = options.delayMs ?? 1000;
  const totals = createUsageAccumulator(options.seed ?? undefined);
  let dirty = false;
  let failed = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let writing: Promise<void> = Promise.resolve();

  const snapshot = (): RunUsage => ({ run: totals.run(), sessions: Object.fromEntries(totals.sessions()) });
  const write = async (): Promise<void> => {
    if (!dirty) return;
    dirty = false;
    try {
      await writeJsonAtomic(options.file, { version: 1, ...snapshot() });
      failed = false;
    } catch (error) {
      dirty = true;
      if (!failed) options.onError(`could not save token and cost totals to ${options.file}: ${messageOf(error)}`);
      failed = true;
    }
  };
  const flush = (): Promise<void> => {
    if (timer !== null) { clearTimeout(timer); timer = null; }
    writing = writing.then(write);
    return writing;
  };

  return {
    add(record) {
      totals.add(record);
      dirty = true;
      if (timer === null) {
        timer = setTimeout(() => { timer = null; void flush(); }, delayMs);
        timer.unref?.();
      }
    },
    totals: snapshot,
    flush,
    close: flush,
  };
}
