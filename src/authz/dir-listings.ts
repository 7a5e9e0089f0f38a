import { lstatSync, opendirSync, statfsSync } from 'node:fs';

/**
 * Directory listings remembered between decisions, for workspaceRealPath's walk (authorizer.ts):
 * a folder's entries, each a file, a folder or a symbolic link (d_type), so that the paths a
 * line names in one folder cost one lstat(2) of the folder instead of one of each path, and
 * git's `.git` none (docs/rules.md#performance).
 *
 * A listing is trusted only while its folder is provably unchanged since it was read. Any
 * change of a folder's entries (create, delete, rename, link, a file swapped for a symbolic
 * link) sets the folder's ctime to the kernel's clock of that moment, and ctime cannot be set
 * by a process (utimes sets only atime and mtime). So a listing is kept with the folder's
 * (device, inode, ctime) and used only when a lstat of the folder, made in the same decision,
 * shows the same three. Two changes in the same tick of the clock leave the same ctime, so a
 * listing is read only of a folder whose ctime is older than the read by RECENT_MS (git's
 * "racily clean" rule): any later change then gets a later ctime. Only local filesystems whose
 * timestamps come from this kernel's clock (LOCAL_FILESYSTEMS: a network filesystem's come
 * from its server's); a ctime in whole seconds (a filesystem with coarse timestamps) waits
 * COARSE_RECENT_MS. A folder is read only when a second lookup finds it as the first did (a
 * folder changed between every two decisions, where an agent keeps writing, is never read: the
 * walk looks its entries up one by one as before). Bounded: a folder of more than MAX_ENTRIES
 * entries is not listed, and all listings are forgotten past MAX_TOTAL entries.
 */

/** What an entry is. */
export const ENTRY_FOLDER = 1;
export const ENTRY_LINK = 2;
export const ENTRY_OTHER = 3;
export type EntryKind = typeof ENTRY_FOLDER | typeof ENTRY_LINK | typeof ENTRY_OTHER;

/** A folder's entries by name. */
export type Listing = ReadonlyMap<string, EntryKind>;

/** What the listings read of a folder: lstat(2)'s identity and change time. */
export interface FolderStats {
  readonly dev: number;
  readonly ino: number;
  readonly ctimeMs: number;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

/** The system calls of the listings (parameters: tests replace the clock and count the reads). */
export interface ListingSystem {
  lstat(path: string): FolderStats | undefined;
  /** The folder's entries, or null when it holds more than `max` or cannot be read. */
  list(path: string, max: number): Map<string, EntryKind> | null;
  /** statfs(2)'s filesystem type of the folder, or null. */
  filesystem(path: string): number | null;
  /** The wall clock, in ms since the epoch (the clock the kernel writes ctimes with). */
  now(): number;
}

/** A folder changed this recently (by ctime) is not listed: a change in the same clock tick would leave its ctime as it is. */
export const RECENT_MS = 100;
/** The same for a ctime in whole seconds (ext4 with small inodes, FAT: one or two seconds per tick). */
export const COARSE_RECENT_MS = 3000;
/** An unlisted folder (too large, not local, unreadable) is tried again after this long. */
const RETRY_MS = 10_000;
const MAX_ENTRIES = 8_192;
const MAX_TOTAL = 65_536;

/** statfs(2) types of local filesystems stamping ctimes with this kernel's clock: ext2/3/4, xfs, btrfs, tmpfs, overlay, f2fs, zfs. */
const LOCAL_FILESYSTEMS: ReadonlySet<number> = new Set([0xef53, 0x58465342, 0x9123683e, 0x01021994, 0x794c7630, 0xf2f52010, 0x2fc12fc1]);

interface Trusted {
  readonly dev: number;
  readonly ino: number;
  readonly ctimeMs: number;
  readonly entries: Listing;
}
/** Not listed before `until` (ms since the epoch). */
interface NotYet {
  readonly until: number;
}
/** Looked up once with this identity and ctime, not read yet: read if the next lookup finds the same. */
interface Seen {
  readonly dev: number;
  readonly ino: number;
  readonly ctimeMs: number;
  readonly entries: null;
}

export class FolderListings {
  private readonly known = new Map<string, Trusted | NotYet | Seen>();
  private total = 0;

  constructor(private readonly system: ListingSystem = NODE_LISTING_SYSTEM) {}

  /** Whether `folder` may have a trusted listing now: false while it is known not to (no lstat worth making for it). */
  mayList(folder: string): boolean {
    const known = this.known.get(folder);
    return known === undefined || !('until' in known) || this.system.now() >= known.until;
  }

  /**
   * The entries of `folder` (absolute), given `stats`, its lstat made in this decision, if a
   * listing of it can be trusted: remembered with the same device, inode and ctime, or read
   * now. Null when none can (the caller looks each entry up).
   */
  entries(folder: string, stats: FolderStats): Listing | null {
    if (!stats.isDirectory() || stats.isSymbolicLink()) return null;
    const known = this.known.get(folder);
    if (known === undefined || 'until' in known) {
      if (known !== undefined && this.system.now() < known.until) return null;
      return this.seen(folder, stats);
    }
    const same = known.dev === stats.dev && known.ino === stats.ino && known.ctimeMs === stats.ctimeMs;
    if (known.entries !== null) return same ? known.entries : this.seen(folder, stats);
    return same ? this.read(folder, stats) : this.seen(folder, stats);
  }

  /** Notes the folder as found (first lookup, or changed since): read at the next lookup that finds it the same. */
  private seen(folder: string, stats: FolderStats): null {
    if (!this.known.has(folder)) this.forgetPast(1);
    this.known.set(folder, { dev: stats.dev, ino: stats.ino, ctimeMs: stats.ctimeMs, entries: null });
    return null;
  }

  private read(folder: string, stats: FolderStats): Listing | null {
    const { system } = this;
    const now = system.now();
    const recent = stats.ctimeMs % 1000 === 0 ? COARSE_RECENT_MS : RECENT_MS;
    if (stats.ctimeMs > now - recent) return this.notYet(folder, Math.min(stats.ctimeMs + recent, now + RETRY_MS));
    const type = system.filesystem(folder);
    if (type === null || !LOCAL_FILESYSTEMS.has(type)) return this.notYet(folder, now + RETRY_MS);
    const entries = system.list(folder, MAX_ENTRIES);
    if (entries === null) return this.notYet(folder, now + RETRY_MS);
    // Unchanged while it was read: the listing is the folder as of `stats`.
    const after = system.lstat(folder);
    if (!after || after.dev !== stats.dev || after.ino !== stats.ino || after.ctimeMs !== stats.ctimeMs) return this.notYet(folder, now + RECENT_MS);
    this.forgetPast(entries.size);
    this.known.set(folder, { dev: stats.dev, ino: stats.ino, ctimeMs: stats.ctimeMs, entries });
    return entries;
  }

  private notYet(folder: string, until: number): null {
    if (!this.known.has(folder)) this.forgetPast(1);
    this.known.set(folder, { until });
    return null;
  }

  private forgetPast(adding: number): void {
    this.total += adding;
    if (this.total > MAX_TOTAL || this.known.size >= MAX_TOTAL) {
      this.known.clear();
      this.total = adding;
    }
  }
}

const NO_THROW = { throwIfNoEntry: false } as const;

export const NODE_LISTING_SYSTEM: ListingSystem = {
  lstat: (path) => lstatSync(path, NO_THROW),
  list(path, max) {
    let dir;
    try {
      dir = opendirSync(path, { bufferSize: 256 });
    } catch {
      return null;
    }
    try {
      const entries = new Map<string, EntryKind>();
      for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
        if (entries.size >= max) return null;
        entries.set(entry.name, entry.isSymbolicLink() ? ENTRY_LINK : entry.isDirectory() ? ENTRY_FOLDER : ENTRY_OTHER);
      }
      return entries;
    } catch {
      return null;
    } finally {
      dir.closeSync();
    }
  },
  filesystem(path) {
    try {
      return statfsSync(path).type;
    } catch {
      return null;
    }
  },
  now: () => Date.now(),
};
