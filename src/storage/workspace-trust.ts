import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { lstatSync, realpathSync } from 'node:fs';
import { lstat, mkdir, realpath, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeTextAtomic } from './atomic';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, readPrivateFile, readRegularFile, userConfigDir } from './private-mode';
import { linkedGrantingFiles } from './trust-links';
import { callsInFlight, exposedTo, settleDeadCalls } from './sandbox-calls';
import { legionIdentity, readTrustRegistry, registerTrusted, REGISTRY_FIX, registryStamp, sameIdentity, trustRegistryFile, unregister } from './trust-registry';

/**
 * Workspace trust (docs/workspace-trust.md). A workspace's `.legion/` may come from a cloned
 * repository: its project layer (config, allow rules, participants' approval authority,
 * allowances) is honoured only when `.legion/trusted` holds a marker only this user could have
 * written: HMAC-SHA256 of the workspace's real path under a random per-user key kept in the
 * user's config folder (`workspace-trust.key`, 0600, never inside a workspace). A moved or
 * re-cloned workspace is untrusted; a marker copied elsewhere does not verify. The marker must
 * also have its entry in the user's trust registry (storage/trust-registry.ts): the `.legion/`
 * folder registered then (same inode and birth time), not revoked since (the shell sandbox
 * revokes one it found moved or replaced). A marker without an entry (written by a Legion from
 * before the registry) is untrusted until `legion trust` runs again.
 */

/** Where the check looks: the workspace (any path to it; its real path is what is signed) and the user's config folder. */
export interface TrustPlace {
  readonly workspaceRoot: string;
  readonly userDir: string;
}

/** Why a workspace is not trusted; `absent`: there is no `.legion/` (nothing to honour, nothing to warn about). */
export type UntrustedReason = 'absent' | 'no-marker' | 'no-key' | 'unsafe-key' | 'mismatch' | 'unreadable' | 'unregistered' | 'revoked' | 'exposed';

/** The trust state of one workspace, computed once by a composition root and passed to every project-layer loader. */
export type WorkspaceTrust =
  | { readonly trusted: true }
  | { readonly trusted: false; readonly reason: UntrustedReason; readonly detail: string };

export const TRUSTED: WorkspaceTrust = { trusted: true };

const MARKER_VERSION = 'legion-workspace-trust v1';
const KEY_BYTES = 32;
/** A marker is one line of ~90 bytes; anything larger is not one. */
const MARKER_MAX_BYTES = 256;

export const trustKeyFile = (userDir: string): string => join(userDir, 'workspace-trust.key');
export const trustMarkerFile = (workspaceRoot: string): string => join(workspaceRoot, '.legion', 'trusted');

/** The place of `workspaceRoot` for the user of `env`/`home` (the same config folder as hooks and MCP trust). */
export function trustPlace(workspaceRoot: string, env: Readonly<Record<string, string | undefined>>, home: string): TrustPlace {
  return { workspaceRoot, userDir: userConfigDir(env, home) };
}

type KeyRead = { ok: true; key: Buffer } | { ok: false; reason: 'no-key' | 'unsafe-key' | 'unreadable'; detail: string };

/** The user's key, checked: a regular file (not a link) of this user, readable by no one else, 64 hex digits. Never creates it. */
async function readKey(file: string): Promise<KeyRead> {
  const read = readPrivateFile(file);
  if (!read.ok) {
    if (read.missing) return { ok: false, reason: 'no-key', detail: `${file} does not exist (no workspace was trusted by this user yet)` };
    if (read.refusal === 'unreadable') return { ok: false, reason: 'unreadable', detail: read.message };
    const forge = read.refusal === 'open-to-others' ? ': anyone could forge a trust marker; remove it and trust again' : '';
    return { ok: false, reason: 'unsafe-key', detail: `${read.message}${forge}` };
  }
  const text = read.text.trim();
  if (!/^[0-9a-f]{64}$/.test(text)) return { ok: false, reason: 'unsafe-key', detail: `${file} is not a key Legion wrote (64 hex digits)` };
  return { ok: true, key: Buffer.from(text, 'hex') };
}

/** The key, created (0600, in a 0700 folder) when there is none. A key that exists but fails the checks is an error, never replaced. */
async function keyForWriting(file: string, userDir: string): Promise<KeyRead> {
  const read = await readKey(file);
  if (read.ok || read.reason !== 'no-key') return read;
  await mkdir(userDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  try {
    await writeFile(file, randomBytes(KEY_BYTES).toString('hex') + '\n', { flag: 'wx', mode: PRIVATE_FILE_MODE });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return { ok: false, reason: 'unreadable', detail: `${file}: ${(error as Error).message}` };
  }
  return readKey(file);
}

/**
 * A `.legion` that is a symbolic link is never trusted: its files live where the link points, which
 * the file tools do not protect (they refuse paths naming `.legion`, not its target), so an agent
 * could rewrite the rules that bind it. A real folder is needed (replace the link with its target).
 */
const SYMLINK_DETAIL = (legionDir: string): string => `${legionDir} is a symbolic link: only a real .legion folder can be trusted (agents could change its files through the link's target)`;

function markerFor(key: Buffer, realRoot: string): string {
  return `${MARKER_VERSION} ${createHmac('sha256', key).update(`${MARKER_VERSION}\0${realRoot}`).digest('hex')}\n`;
}

/**
 * Is the workspace trusted? Reads, never writes. Untrusted with a reason when `.legion/` is
 * absent, the marker is missing or does not verify for this real path under this user's key,
 * or the key is missing or unsafe (another user could have forged the marker).
 */
export async function checkWorkspaceTrust(place: TrustPlace): Promise<WorkspaceTrust> {
  // Synchronous calls: every start runs this before its first frame, and each promised call was a
  // round trip through libuv's thread pool (docs/performance.md#start-up).
  let realRoot: string;
  try {
    realRoot = realpathSync.native(place.workspaceRoot);
  } catch (error) {
    return { trusted: false, reason: 'unreadable', detail: `${place.workspaceRoot}: ${(error as Error).message}` };
  }
  const legionDir = join(realRoot, '.legion');
  let stats;
  try {
    stats = lstatSync(legionDir, { throwIfNoEntry: false });
  } catch {
    stats = undefined;
  }
  if (stats === undefined) return { trusted: false, reason: 'absent', detail: `${legionDir} does not exist` };
  if (stats.isSymbolicLink()) return { trusted: false, reason: 'mismatch', detail: SYMLINK_DETAIL(legionDir) };
  const file = trustMarkerFile(realRoot);
  // Only a small regular file is read, checked on the file opened: a committed marker that is a
  // link to /dev/zero, a FIFO or a huge file would otherwise hang the start or fill memory.
  const read = readRegularFile(file, MARKER_MAX_BYTES);
  if (!read.ok) {
    if (read.missing) return { trusted: false, reason: 'no-marker', detail: `${legionDir} was not made by Legion for you here and you have not trusted it` };
    if (read.refusal !== 'unreadable') return { trusted: false, reason: 'mismatch', detail: `${file} is not a marker Legion wrote (not a small regular file)` };
    return { trusted: false, reason: 'unreadable', detail: read.message };
  }
  const marker = read.text;
  const key = await readKey(trustKeyFile(place.userDir));
  if (!key.ok) return { trusted: false, reason: key.reason, detail: key.detail };
  const expected = Buffer.from(markerFor(key.key, realRoot));
  const found = Buffer.from(marker);
  if (expected.length !== found.length || !timingSafeEqual(expected, found)) {
    return { trusted: false, reason: 'mismatch', detail: `${file} was not written for this folder by you (moved, copied or cloned)` };
  }
  return registryVerdict(place.userDir, realRoot);
}

/** The marker verified: is `.legion/` the folder registered as trusted, and not revoked since? */
function registryVerdict(userDir: string, realRoot: string): WorkspaceTrust {
  const registryFile = trustRegistryFile(userDir);
  const stamp = registryStamp(registryFile);
  let read = readTrustRegistry(registryFile);
  if (!read.ok) return { trusted: false, reason: 'unreadable', detail: `${read.error}: ${REGISTRY_FIX}` };
  // A Legion killed during a sandboxed call never checked after it: what the call could reach unhidden is revoked now.
  const unsettled = settleDeadCalls(registryFile, read.registry);
  if (unsettled !== undefined) return { trusted: false, reason: 'unreadable', detail: `${unsettled}: ${REGISTRY_FIX}` };
  // Read again when the file changed since the stamp (a revocation written just now, or by another
  // process); unchanged, the first read is the registry (every start checks each of its entries).
  if (registryStamp(registryFile) !== stamp) {
    read = readTrustRegistry(registryFile);
    if (!read.ok) return { trusted: false, reason: 'unreadable', detail: `${read.error}: ${REGISTRY_FIX}` };
  }
  const legionDir = join(realRoot, '.legion');
  const entry = read.registry.workspaces.find((e) => e.root === realRoot);
  // `used`: recorded at an untrusted start, which is what a marker from before the registry gets.
  if (!entry || entry.state === 'used') return { trusted: false, reason: 'unregistered', detail: `${legionDir} was trusted by a Legion from before the trust registry (${registryFile}), or the registry was removed` };
  if (entry.state === 'revoked') return { trusted: false, reason: 'revoked', detail: `trust of ${legionDir} was revoked at ${entry.at}: ${entry.why ?? 'revoked'}` };
  if (!sameIdentity(entry, legionIdentity(realRoot))) return { trusted: false, reason: 'mismatch', detail: `${legionDir} is not the folder you trusted (replaced or re-created since)` };
  const running = callsInFlight(registryFile).find((call) => call.alive && exposedTo(entry, call));
  if (running) return { trusted: false, reason: 'exposed', detail: `a sandboxed command that began before ${legionDir} was trusted is still running in ${running.root} (process ${running.pid}) and could write there; when it ends this trust is revoked: review .legion/ then and run legion trust again` };
  return TRUSTED;
}

export type TrustWrite = { ok: true; marker: string } | { ok: false; kind: 'unsafe-key' | 'unreadable' | 'no-workspace' | 'linked'; error: string };

/** Write the marker for the workspace (creating the user's key on first need). `.legion/` must exist. */
export async function writeWorkspaceTrust(place: TrustPlace): Promise<TrustWrite> {
  let realRoot: string;
  try {
    realRoot = await realpath(place.workspaceRoot);
    if ((await lstat(join(realRoot, '.legion'))).isSymbolicLink()) return { ok: false, kind: 'no-workspace', error: SYMLINK_DETAIL(join(realRoot, '.legion')) };
  } catch (error) {
    return { ok: false, kind: 'no-workspace', error: `${join(place.workspaceRoot, '.legion')}: ${(error as Error).message}` };
  }
  // What the user reviewed must be what is trusted: a granting file reached through a link can change after.
  const linked = linkedGrantingFiles(join(realRoot, '.legion'));
  if (linked.length > 0) return { ok: false, kind: 'linked', error: `${linked.map((p) => `.legion/${p}`).join(', ')} ${linked.length === 1 ? 'is a link' : 'are links'} (symbolic, or a second hard link): a file elsewhere could change what you trust; replace ${linked.length === 1 ? 'it' : 'them'} with a plain copy (cp --remove-destination), then run legion trust` };
  const key = await keyForWriting(trustKeyFile(place.userDir), place.userDir);
  if (!key.ok) return { ok: false, kind: key.reason === 'unsafe-key' ? 'unsafe-key' : 'unreadable', error: key.detail };
  // Calls of a Legion killed before their check are settled first: settled after, they would revoke this new trust.
  const registryFile = trustRegistryFile(place.userDir);
  const before = readTrustRegistry(registryFile);
  const unsettled = before.ok ? settleDeadCalls(registryFile, before.registry) : before.error;
  if (unsettled !== undefined) return { ok: false, kind: 'unreadable', error: `${unsettled}: ${REGISTRY_FIX}` };
  const file = trustMarkerFile(realRoot);
  await writeTextAtomic(file, markerFor(key.key, realRoot));
  const registered = registerTrusted(registryFile, realRoot);
  if (!registered.ok) return { ok: false, kind: 'unreadable', error: `the marker is written but the trust registry could not record it (${registered.error}): ${REGISTRY_FIX}` };
  return { ok: true, marker: file };
}

/** Remove the marker and the registry entry; true when there was either. The key stays (other workspaces' markers use it). */
export async function revokeWorkspaceTrust(place: TrustPlace): Promise<boolean> {
  const realRoot = await realpath(place.workspaceRoot).catch(() => place.workspaceRoot);
  const file = trustMarkerFile(realRoot);
  // The marker goes first: whatever happens to the registry after, the workspace is untrusted.
  let marked = true;
  try {
    await lstat(file);
    await rm(file, { force: true });
  } catch {
    marked = false;
  }
  const registry = trustRegistryFile(place.userDir);
  const entry = readTrustRegistry(registry);
  const listed = entry.ok && entry.registry.workspaces.some((e) => e.root === realRoot);
  if (listed) {
    const removed = unregister(registry, realRoot);
    if (!removed.ok) throw new Error(removed.error);
  }
  return marked || listed;
}

/** What an untrusted workspace's `.legion/` has that Legion ignores (docs/workspace-trust.md), for the one start line. */
export const IGNORED_WHEN_UNTRUSTED = '.legion/config.yaml, allow rules and defaults of .legion/rules.yaml, approvalAuthority of stored agents, saved allowances, project prices';

/**
 * The one start line for an untrusted workspace, or null (trusted, or no `.legion/` yet). What
 * to do and what is ignored come first: a screen that cuts the line keeps them; why comes last.
 */
export function untrustedNotice(trust: WorkspaceTrust): string | null {
  if (trust.trusted || trust.reason === 'absent') return null;
  return `untrusted workspace, run legion trust once you have reviewed .legion/: ignoring ${IGNORED_WHEN_UNTRUSTED} (${trust.detail})`;
}
