import { statSync } from 'node:fs';
import { readRunUsage, type RunUsage } from '../runtime/usage-book';
import { createUsageAccumulator, type UsageRecord } from '../providers/usage-totals';

/** The run's usage totals as a worker's core sees them (budgets and `usage()` read them). */
export interface WorkerUsage {
  /** Start again from the hub's totals in `file` (usage.json; none or damaged: zero). */
  reseed(file: string): Promise<void>;
  /** A usage event of this core's own model calls since. */
  add(record: UsageRecord): void;
  totals(): RunUsage;
}

/** inode, size and mtime (ns) of `file`, or `-` when there is none: equal = not rewritten in between. */
function stamp(file: string): string {
  const s = statSync(file, { bigint: true, throwIfNoEntry: false });
  return s ? `${s.ino} ${s.size} ${s.mtimeNs}` : '-';
}

/**
 * The hub counts the usage events it forwards and writes the run's `usage.json`
 * (docs/engine.md#what-is-not-durable); a worker reads that file at each turn's start and adds
 * its own calls' usage since, so a budget sees the run's totals while the worker keeps its core
 * between turns (docs/engine.md#a-turn-on-a-worker) instead of rebuilding it whenever the hub
 * rewrote the file. The file trails the hub by up to its write delay (1 s): a turn sent right
 * after another may not see that one's usage yet, as before. The file is parsed again only when
 * its stamp (inode, size, mtime) changed since the last read: 20 turns starting together read
 * it once, also while that read is still under way (they share it; the stamp is taken before
 * the read, so a file replaced meanwhile is read again next time; a read that fails is not
 * kept). `read`: the parser (a test counts its calls).
 */
export function workerUsage(read: typeof readRunUsage = readRunUsage): WorkerUsage {
  let totals = createUsageAccumulator();
  let last: { file: string; stamp: string; usage: Promise<RunUsage | undefined> } | undefined;
  return {
    async reseed(file) {
      const now = stamp(file);
      if (last?.file !== file || last.stamp !== now) {
        const usage = read(file).then((r) => r.usage ?? undefined);
        const kept = { file, stamp: now, usage };
        last = kept;
        usage.catch(() => {
          if (last === kept) last = undefined;
        });
      }
      totals = createUsageAccumulator(await last.usage);
    },
    add: (record) => totals.add(record),
    totals: () => ({ run: totals.run(), sessions: Object.fromEntries(totals.sessions()) }),
  };
}
