import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { surelyAbsent } from './absent';
import { dirname, join, relative, sep } from 'node:path';
import { lockToken, pidIsAlive } from './lock-file';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from './private-mode';
import { revokeEntries, type RegistryEntry, type TrustRegistry } from './trust-registry';

/**
 * Sandboxed calls in flight, one small file each beside the trust registry
 * (`sandbox-calls/<pid>-<token>.json`: the workspace root and the registry serial the call
 * started with). A workspace trusted after such a call began was not hidden from it: its trust
 * is not honoured while the call runs, and is revoked when it ends (src/tools/sandbox/known-legion.ts),
 * or, when the Legion running it died before its check, by the next check that finds the record
 * of a dead process (docs/workspace-trust.md#the-registry).
 */
export interface CallInFlight {
  readonly pid: number;
  readonly root: string;
  readonly serial: number;
}

export interface CallRecord extends CallInFlight {
  readonly file: string;
  readonly alive: boolean;
}

const callsDir = (registryFile: string): string => join(dirname(registryFile), 'sandbox-calls');

/** Record a call about to run; returns what removes the record (call it after the call's check). */
export function recordCall(registryFile: string, call: Omit<CallInFlight, 'pid'>): () => void {
  const dir = callsDir(registryFile);
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const file = join(dir, `${process.pid}-${lockToken()}.json`);
  writeFileSync(file, JSON.stringify({ pid: process.pid, root: call.root, serial: call.serial }) + '\n', { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  return () => rmSync(file, { force: true });
}

/** Every recorded call, with whether its process is alive. A record that does not parse is skipped (it names no workspace). */
export function callsInFlight(registryFile: string): CallRecord[] {
  const dir = callsDir(registryFile);
  let names: string[];
  // Every start's trust check asks twice; the folder exists only once a sandboxed call ran.
  if (surelyAbsent(dir)) return [];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const calls: CallRecord[] = [];
  for (const name of names) {
    if (!name.endsWith('.json')) continue;
    const file = join(dir, name);
    try {
      const value = JSON.parse(readFileSync(file, 'utf8')) as Partial<CallInFlight>;
      if (typeof value.pid !== 'number' || typeof value.root !== 'string' || typeof value.serial !== 'number') continue;
      calls.push({ pid: value.pid, root: value.root, serial: value.serial, file, alive: value.pid !== process.pid ? pidIsAlive(value.pid) : true });
    } catch {
      // removed meanwhile (the call ended), or half-written
    }
  }
  return calls;
}

/**
 * Could `call` have written `entry`'s `.legion/` unhidden? A trusted entry in the call's
 * workspace (not the workspace's own `.legion/`, hidden in every call), trusted after the call
 * read the registry.
 */
export function exposedTo(entry: RegistryEntry, call: CallInFlight): boolean {
  if (entry.state !== 'trusted' || entry.serial <= call.serial) return false;
  const legion = join(entry.root, '.legion');
  if (legion === join(call.root, '.legion')) return false;
  const rel = relative(call.root, legion);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !rel.startsWith(sep);
}

/**
 * Calls whose Legion died before checking after them (killed mid-call; bubblewrap ends their
 * processes with it): revoke what each could have written unhidden, then forget the record.
 * An error when a revocation could not be written (the caller fails closed).
 */
export function settleDeadCalls(registryFile: string, registry: TrustRegistry): string | undefined {
  for (const call of callsInFlight(registryFile)) {
    if (call.alive) continue;
    const exposed = registry.workspaces.filter((entry) => exposedTo(entry, call));
    if (exposed.length > 0) {
      const revoked = revokeEntries(registryFile, exposed, `trusted while a sandboxed command in ${call.root} could write to it, and the Legion running it (process ${call.pid}) ended before its check; review .legion/ and run legion trust there again`);
      if (!revoked.ok) return revoked.error;
    }
    rmSync(call.file, { force: true });
  }
  return undefined;
}
