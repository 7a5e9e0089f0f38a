import { lstatSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PRIVATE_DIR_MODE, readPrivateFile } from './private-mode';
import { z } from 'zod';
import { writeJsonAtomicSync } from './atomic';
import { lazySchema } from './lazy-schema';
import { ONE_SHOT } from './zod-validate';
import { createLockFile, lockToken, pidIsAlive, readLockFile, removeLockIfUnchanged } from './lock-file';

/**
 * The trust registry (docs/workspace-trust.md#the-registry): every `.legion/` this user trusted
 * (and every one Legion started in untrusted, as `used`: its transcripts are hidden too),
 * by the real path of its workspace and the identity of the `.legion/` folder (inode and birth
 * time: a folder moved and moved back keeps both, a re-created one does not). It lives in the
 * user's config folder, which sandboxed commands cannot read or write. Trust needs the marker
 * AND a `trusted` entry matching the folder; the shell sandbox hides and pins every entry in
 * reach instead of searching the workspace for `.legion/`, and revokes an entry that is not
 * where it was registered (src/tools/sandbox/known-legion.ts).
 *
 * Writers (`legion trust`, first starts, the sandbox's revocations, from several processes) take
 * `<file>.lock` (storage/lock-file.ts) around a read-modify-write; readers never lock (the file
 * is replaced atomically). An unreadable or malformed registry is never repaired: every check
 * fails closed on it with one line naming the file.
 */

export const trustRegistryFile = (userDir: string): string => join(userDir, 'trusted-workspaces.json');

/** Identity of a `.legion/` folder: decimal inode and birth time (ns; 0 where the file system has none). */
export interface LegionIdentity {
  readonly ino: string;
  readonly born: string;
}

/** Characters of a revocation's reason kept. */
const WHY_MAX = 1000;

const entrySchema = lazySchema(() => z.object({
  /** Real path of the workspace; its `.legion/` is `<root>/.legion`. */
  root: z.string().startsWith('/').refine((s) => !s.includes('\0') && s.length <= 4096, 'not a path'),
  ino: z.string().regex(/^\d{1,40}$/),
  born: z.string().regex(/^\d{1,40}$/),
  /** The registry's serial when this entry was written: a sandboxed call revokes entries newer than its start. */
  serial: z.number().int().nonnegative(),
  /** `used`: a `.legion/` Legion started in untrusted (its transcripts, web token): hidden and pinned, never honoured. */
  state: z.enum(['trusted', 'revoked', 'used']),
  at: z.string().max(64),
  why: z.string().max(WHY_MAX).optional(),
}).strict());

/** Exported for test/unit/trust/trust-registry-plain.test.ts (with plainRegistry). */
export const registrySchema = lazySchema(() => z.object({
  version: z.literal(1),
  serial: z.number().int().nonnegative(),
  workspaces: z.array(entrySchema()),
}).strict());

export type RegistryEntry = z.infer<ReturnType<typeof entrySchema>>;
export type TrustRegistry = z.infer<ReturnType<typeof registrySchema>>;
export type RegistryRead = { readonly ok: true; readonly registry: TrustRegistry } | { readonly ok: false; readonly error: string };

const EMPTY: TrustRegistry = { version: 1, serial: 0, workspaces: [] };
/** ~200 bytes an entry: room for tens of thousands of workspaces. */
const REGISTRY_MAX_BYTES = 8 * 1024 * 1024;
const LOCK_WAIT_MS = 5_000;

/** The `.legion/` of `root` as it is now: a real directory (not a link), or undefined. Paths through linked parents are followed. */
export function legionIdentity(root: string): LegionIdentity | undefined {
  try {
    const stats = lstatSync(join(root, '.legion'), { bigint: true });
    if (!stats.isDirectory()) return undefined;
    return { ino: stats.ino.toString(), born: stats.birthtimeNs.toString() };
  } catch {
    return undefined;
  }
}

export const sameIdentity = (entry: LegionIdentity, now: LegionIdentity | undefined): boolean => now !== undefined && entry.ino === now.ino && entry.born === now.born;

/**
 * The registry file's stamp: inode, size, modification and change times (writers replace it by
 * a rename: a new inode), or `absent`. Equal stamps: the same contents as when last read.
 */
export function registryStamp(file: string): string {
  try {
    const s = lstatSync(file, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
  } catch {
    return 'absent';
  }
}

/** Read and validate the registry. No file (or no config folder): empty (nothing trusted yet). Anything else that is not a registry Legion wrote: an error. */
export function readTrustRegistry(file: string): RegistryRead {
  // Others may read it (which workspaces are trusted is no secret), never change it.
  const read = readPrivateFile(file, { openBits: 0o022, maxBytes: REGISTRY_MAX_BYTES });
  if (!read.ok) {
    // No registry (nor a config folder to hold one): nothing is trusted, so nothing is honoured to protect.
    if (read.missing) return { ok: true, registry: EMPTY };
    return { ok: false, error: read.refusal === 'too-large' ? `${file} is larger than a registry Legion writes` : read.message };
  }
  const text = read.text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, error: `${file} is not valid JSON` };
  }
  const plain = plainRegistry(parsed);
  if (plain) return { ok: true, registry: plain };
  // Read a few times per process (each start's trust check, the sandbox when the file changed): no zod JIT (ONE_SHOT).
  const result = registrySchema().safeParse(parsed, ONE_SHOT);
  if (!result.success) return { ok: false, error: `${file} is not a registry Legion wrote (${result.error.issues[0]?.path.join('.') || 'top level'}: ${result.error.issues[0]?.message ?? 'invalid'})` };
  return { ok: true, registry: result.data };
}

const DIGITS = /^\d{1,40}$/;
const STATES: ReadonlySet<unknown> = new Set(['trusted', 'revoked', 'used']);
const ENTRY_KEYS: ReadonlySet<string> = new Set(['root', 'ino', 'born', 'serial', 'state', 'at', 'why']);
const REGISTRY_KEYS: ReadonlySet<string> = new Set(['version', 'serial', 'workspaces']);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const onlyKeys = (o: Record<string, unknown>, keys: ReadonlySet<string>): boolean => Object.keys(o).every((k) => keys.has(k));
const serialNumber = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * The registry as the schema returns it, when a plain check shows the schema accepts it; else
 * undefined, and the schema decides (and names what is wrong). Every start reads every entry,
 * twice (its trust check settles dead sandboxed calls, then reads again), and the schema took
 * ~30 µs an entry (a registry of 350 workspaces: ~20 ms of a start, loaded). The check accepts
 * nothing the schema refuses and everything it accepts from JSON, and returns the same value
 * (test/unit/trust/trust-registry-plain.test.ts keeps the two in step).
 */
export function plainRegistry(v: unknown): TrustRegistry | undefined {
  if (!isObject(v) || !onlyKeys(v, REGISTRY_KEYS) || v.version !== 1 || !serialNumber(v.serial) || !Array.isArray(v.workspaces)) return undefined;
  const workspaces: RegistryEntry[] = [];
  for (const e of v.workspaces) {
    const entry = plainEntry(e);
    if (!entry) return undefined;
    workspaces.push(entry);
  }
  return { version: 1, serial: v.serial, workspaces };
}

function plainEntry(e: unknown): RegistryEntry | undefined {
  if (!isObject(e) || !onlyKeys(e, ENTRY_KEYS)) return undefined;
  const { root, ino, born, serial, state, at, why } = e;
  if (typeof root !== 'string' || !root.startsWith('/') || root.includes('\0') || root.length > 4096) return undefined;
  if (typeof ino !== 'string' || !DIGITS.test(ino) || typeof born !== 'string' || !DIGITS.test(born)) return undefined;
  if (!serialNumber(serial) || !STATES.has(state) || typeof at !== 'string' || at.length > 64) return undefined;
  const entry = { root, ino, born, serial, state: state as RegistryEntry['state'], at };
  if (!('why' in e)) return entry;
  if (typeof why !== 'string' || why.length > WHY_MAX) return undefined;
  return { ...entry, why };
}

/** The advice every registry error ends with. */
export const REGISTRY_FIX = 'remove it, then run legion trust in each workspace you trust';

export type RegistryUpdate = { readonly ok: true; readonly registry: TrustRegistry } | { readonly ok: false; readonly error: string };

/**
 * Read-modify-write under the registry's lock. `change` gets the current registry and the next
 * serial and returns the new list of entries (or undefined: nothing to write). A registry that
 * does not read is left as it is (never repaired), and the lock is waited for up to 5 s.
 */
export function updateTrustRegistry(file: string, change: (registry: TrustRegistry, serial: number) => RegistryEntry[] | undefined): RegistryUpdate {
  const lock = `${file}.lock`;
  let held: string;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: PRIVATE_DIR_MODE });
    held = acquire(lock);
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
  try {
    const read = readTrustRegistry(file);
    if (!read.ok) return read;
    const serial = read.registry.serial + 1;
    const workspaces = change(read.registry, serial);
    if (!workspaces) return read;
    const next: TrustRegistry = { version: 1, serial, workspaces };
    writeJsonAtomicSync(file, next);
    return { ok: true, registry: next };
  } catch (error) {
    return { ok: false, error: `${file}: ${(error as Error).message}` };
  } finally {
    removeLockIfUnchanged(lock, held);
  }
}

/** Record `root`'s `.legion/` (as it is now) as trusted, replacing any entry of that root. */
export function registerTrusted(file: string, root: string): RegistryUpdate {
  const identity = legionIdentity(root);
  if (!identity) return { ok: false, error: `${join(root, '.legion')} is not a folder` };
  return updateTrustRegistry(file, (registry, serial) => [
    ...registry.workspaces.filter((entry) => entry.root !== root),
    { root, ...identity, serial, state: 'trusted', at: new Date().toISOString() },
  ]);
}

/**
 * Record `root`'s `.legion/` as used (Legion started there untrusted), unless an entry of that
 * folder exists: the sandbox hides its transcripts and web token from then on. `used` entries
 * whose folder is gone are dropped on the way. Nothing to do without a `.legion/`.
 */
export function registerUsed(file: string, root: string): RegistryUpdate {
  const identity = legionIdentity(root);
  const known = readTrustRegistry(file);
  if (!identity || (known.ok && known.registry.workspaces.some((e) => e.root === root && sameIdentity(e, identity)))) return known;
  return updateTrustRegistry(file, (registry, serial) => {
    if (registry.workspaces.some((e) => e.root === root && sameIdentity(e, identity))) return undefined;
    const kept = registry.workspaces.filter((e) => e.root !== root && (e.state !== 'used' || legionIdentity(e.root) !== undefined));
    return [...kept, { root, ...identity, serial, state: 'used', at: new Date().toISOString() }];
  });
}

/** Forget `root` (trust revoked by the user). */
export function unregister(file: string, root: string): RegistryUpdate {
  return updateTrustRegistry(file, (registry) => (registry.workspaces.some((entry) => entry.root === root) ? registry.workspaces.filter((entry) => entry.root !== root) : undefined));
}

/**
 * Mark `judged` entries revoked, each only if it is still the entry that was judged (same root,
 * identity and serial, still trusted): a `legion trust` run meanwhile is not undone.
 */
export function revokeEntries(file: string, judged: readonly RegistryEntry[], why: string): RegistryUpdate {
  if (judged.length === 0) return { ok: true, registry: EMPTY };
  const matches = (entry: RegistryEntry) => judged.some((j) => j.root === entry.root && j.ino === entry.ino && j.born === entry.born && j.serial === entry.serial);
  return updateTrustRegistry(file, (registry) => {
    if (!registry.workspaces.some((entry) => entry.state === 'trusted' && matches(entry))) return undefined;
    const at = new Date().toISOString();
    // Within the schema's bound, or the registry written would not read back (every trust lost, every call refused).
    const said = why.length > WHY_MAX ? `${why.slice(0, WHY_MAX - 1)}…` : why;
    return registry.workspaces.map((entry) => (entry.state === 'trusted' && matches(entry) ? { ...entry, state: 'revoked', at, why: said } : entry));
  });
}

/** Take the lock file (pid, token); a holder whose process is gone is taken over. Throws after waiting. */
function acquire(lock: string): string {
  const mine = `${process.pid}\n${lockToken()}\n`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      if (createLockFile(lock, mine)) return mine;
    } catch (error) {
      throw new Error(`${lock}: ${(error as Error).message}`);
    }
    const seen = readLockFile(lock);
    if (seen !== undefined) {
      const holder = Number.parseInt(seen, 10);
      const stale = Number.isInteger(holder) && holder > 0 ? holder === process.pid || !pidIsAlive(holder) : ageMs(lock) > 2_000;
      if (stale) {
        removeLockIfUnchanged(lock, seen);
        continue;
      }
    }
    if (Date.now() > deadline) throw new Error(`the trust registry is busy (${lock} is held by process ${Number.parseInt(seen ?? '', 10) || 'unknown'})`);
    pause ??= new Int32Array(new SharedArrayBuffer(4));
    Atomics.wait(pause, 0, 0, 5);
  }
}

let pause: Int32Array | undefined;

function ageMs(file: string): number {
  try {
    return Date.now() - lstatSync(file).mtimeMs;
  } catch {
    return 0;
  }
}
