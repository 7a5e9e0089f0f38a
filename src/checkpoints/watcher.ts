import { watch, readdirSync, readFileSync, statSync, type FSWatcher } from 'node:fs';
import { join, relative, sep } from 'node:path';

/**
 * A cheap "did anything change since the last snapshot?" for the no-change case (docs/undo.md):
 * one inotify watch per directory of the workspace (not `.legion/`, `.git/` nor the directories
 * git ignores), any event marks the workspace dirty. `clean()` is true only when the watcher is
 * healthy, was armed by a snapshot, and saw nothing since. Anything uncertain — a watch that
 * could not be added (inotify limit), an error, a `.gitignore` changing, too many directories —
 * makes it dirty (and broken ones stay dirty), so the worst case is a full `git add -A`, never
 * a missed change.
 */
export interface ChangeWatcher {
  /** True when nothing changed since `arm()`. Lets pending filesystem events arrive first. */
  clean(): Promise<boolean>;
  /**
   * The workspace-relative paths (`/`-separated; files or folders, existing or gone) that changed
   * since `arm()`, or undefined when that is not known for sure: never armed, broken, an event
   * without a name, more than `maxPaths` paths, or so many events that the kernel's queue could
   * have dropped some. Every change in a watched folder is in the set; changes in ignored
   * folders are not (git leaves those out anyway). Lets pending filesystem events arrive first.
   */
  changes(): Promise<ReadonlySet<string> | undefined>;
  /** A snapshot was just taken: start counting changes from now. */
  arm(): void;
  close(): void;
}

export interface WatcherOptions {
  readonly root: string;
  /** Workspace-relative directories not to watch (git-ignored, with `/` separators). */
  readonly ignoredDirs: ReadonlySet<string>;
  /** Give up (always dirty) past this many directories. */
  readonly maxDirs?: number;
  /** `changes()` answers "unknown" past this many changed paths (default 2,000). */
  readonly maxPaths?: number;
  /** `changes()` answers "unknown" past this many events since `arm()` (default: a quarter of the
   *  kernel's inotify queue, `fs.inotify.max_queued_events`, which one process shares). */
  readonly maxEvents?: number;
}

/** A quarter of the kernel's inotify queue length (events beyond a full queue are dropped unseen). */
function defaultMaxEvents(): number {
  try {
    const queued = Number(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8').trim());
    if (Number.isFinite(queued) && queued > 0) return Math.floor(queued / 4);
  } catch {
    // not Linux, or no /proc: the usual default
  }
  return 4096;
}

const NEVER = new Set(['.legion', '.git']);

export function createChangeWatcher(options: WatcherOptions): ChangeWatcher {
  const watchers = new Map<string, FSWatcher>();
  let dirty = true;
  let broken = false;
  const maxDirs = options.maxDirs ?? 20_000;
  const maxPaths = options.maxPaths ?? 2_000;
  const maxEvents = options.maxEvents ?? defaultMaxEvents();
  /** What changed since `arm()`, while `known` (see `changes()`). */
  let changed = new Set<string>();
  let known = false;
  let events = 0;

  const fail = (): void => {
    broken = true;
    dirty = true;
    for (const w of watchers.values()) w.close();
    watchers.clear();
  };

  const rel = (dir: string): string => relative(options.root, dir).split(sep).join('/');

  const add = (dir: string): void => {
    if (broken || watchers.has(dir)) return;
    if (watchers.size >= maxDirs) return fail();
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { persistent: false }, (_event, name) => onEvent(dir, name));
    } catch (error) {
      // The directory vanished meanwhile: its parent's event already marked us dirty.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') return;
      return fail();
    }
    // That folder's changes would no longer be seen: git decides from now on.
    watcher.on('error', () => fail());
    watchers.set(dir, watcher);
    let entries: import('node:fs').Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (!entry.isDirectory()) continue;
      if (dir === options.root && NEVER.has(entry.name)) continue;
      const child = join(dir, entry.name);
      if (options.ignoredDirs.has(rel(child))) continue;
      add(child);
    }
  };

  const onEvent = (dir: string, name: string | Buffer | null): void => {
    const file = name === null ? null : String(name);
    if (dir === options.root && file !== null && NEVER.has(file)) return;
    dirty = true;
    if (++events > maxEvents) known = false;
    if (file === null) {
      known = false;
      return;
    }
    if (file === '.gitignore') return fail(); // which directories count changed: stay on git from now on
    const path = join(dir, file);
    const relPath = rel(path);
    if (options.ignoredDirs.has(relPath)) return;
    if (known) {
      changed.add(relPath);
      if (changed.size > maxPaths) known = false;
    }
    try {
      if (statSync(path).isDirectory()) add(path);
    } catch {
      const gone = watchers.get(path);
      gone?.close();
      watchers.delete(path);
    }
  };

  add(options.root);
  return {
    async clean() {
      if (broken || dirty) return false;
      await drain();
      return !dirty && !broken;
    },
    async changes() {
      if (broken || !known) return undefined;
      await drain();
      return broken || !known ? undefined : new Set(changed);
    },
    arm() {
      if (broken) return;
      dirty = false;
      changed = new Set();
      known = true;
      events = 0;
    },
    close() {
      for (const w of watchers.values()) w.close();
      watchers.clear();
      broken = true;
    },
  };
}

/**
 * Events of writes that already returned are queued in the kernel: the next poll phase reads
 * them. Two immediates guarantee one full poll phase in between, whatever phase we are in.
 */
async function drain(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
}
