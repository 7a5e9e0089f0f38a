import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isInside } from './secrets';
import {
  legionIdentity, readTrustRegistry, REGISTRY_FIX, registryStamp, revokeEntries, sameIdentity,
  type RegistryEntry, type RegistryRead,
} from '../../storage/trust-registry';
import { exposedTo, recordCall, settleDeadCalls } from '../../storage/sandbox-calls';

/**
 * The `.legion/` folders Legion honours are known, not searched for (docs/sandbox.md#known-legion-folders):
 * only a trusted `.legion/` is honoured, and each was registered when it was trusted
 * (storage/trust-registry.ts; so is each Legion started in untrusted, as `used`). Before a sandboxed call, every registered `.legion/` found where
 * it was registered (same real path, inode and birth time) is hidden; in the workspace, every
 * directory between the workspace root and it is bound over itself too (a mount point cannot be
 * renamed, removed or replaced), so the call cannot move it, or its parents, aside.
 *
 * A trusted entry in the workspace that is NOT where it was registered (moved away by a call that
 * ran before it was trusted, replaced) is revoked before the call, and again after it; so is one
 * registered while the call ran (the call could write to it unhidden). Revoked is fail-closed:
 * untrusted until the user runs `legion trust` again. A registry that does not read refuses the call.
 */
export interface KnownLegionPlan {
  /** Registered `.legion/` folders to hide (real paths, in place). */
  readonly hiddenDirs: readonly string[];
  /** Directories of the workspace between its root and a trusted `.legion/` in it, shallowest first. */
  readonly pinned: readonly string[];
  /** The registry's serial as read: entries written later were not hidden by this call. */
  readonly serial: number;
  /** What was revoked before the call, as a line for its result (or undefined). */
  readonly revokedBefore?: string;
  /** Removes this call's in-flight record (storage/sandbox-calls.ts), after the check. */
  readonly release: () => void;
}

export interface KnownLegion {
  before(root: string): { ok: true; plan: KnownLegionPlan } | { ok: false; error: string };
  /** After the call's processes ended: revoke what moved or was trusted meanwhile; the line to report, or undefined. */
  after(root: string, plan: KnownLegionPlan): string | undefined;
}

/** `registryFile`: the user's trust registry (trustRegistryFile of the user's config folder). Read again only when it changed. */
export function knownLegion(registryFile: string): KnownLegion {
  let cached: { key: string; read: RegistryRead } | undefined;
  const read = (): RegistryRead => {
    const key = registryStamp(registryFile);
    if (cached?.key !== key) cached = { key, read: readTrustRegistry(registryFile) };
    return cached.read;
  };
  const refusal = (error: string) => `refused: the trust registry could not be read (${error}): nothing was run; ${REGISTRY_FIX} (docs/workspace-trust.md#the-registry)`;

  return {
    before(root) {
      let registry = read();
      if (!registry.ok) return { ok: false, error: refusal(registry.error) };
      // Calls of a Legion that died before checking after them: what they could reach unhidden is revoked first.
      const unsettled = settleDeadCalls(registryFile, registry.registry);
      if (unsettled !== undefined) return { ok: false, error: refusal(unsettled) };
      registry = read();
      if (!registry.ok) return { ok: false, error: refusal(registry.error) };
      // Recorded (until the check after the call) before the plan is read: a workspace trusted from
      // here on, in reach, is not honoured while the call runs and is revoked after it. One trusted
      // while the plan is read is both hidden and revoked: fail-closed.
      const serial = registry.registry.serial;
      let release: () => void;
      try {
        release = recordCall(registryFile, { root, serial });
      } catch (error) {
        // A folder where no file can be made holds no registry entry made later either: nothing to withhold.
        if (!UNWRITABLE.has((error as NodeJS.ErrnoException).code ?? '')) return { ok: false, error: refusal(`the call could not be recorded: ${(error as Error).message}`) };
        release = () => undefined;
      }
      const refuse = (error: string) => {
        release();
        return { ok: false as const, error: refusal(error) };
      };
      registry = read();
      if (!registry.ok) return refuse(registry.error);
      const hidden = new Set<string>();
      const pinned = new Set<string>();
      const moved: RegistryEntry[] = [];
      for (const entry of registry.registry.workspaces) {
        const legion = join(entry.root, '.legion');
        // A `.legion/` holding the workspace (an isolated session's worktree) is hidden around it (enclosingLegionPaths).
        if (isInside(root, legion)) continue;
        const reach = isInside(legion, root);
        const here = inPlace(entry);
        if (!here) {
          if (reach && entry.state === 'trusted') moved.push(entry);
          continue;
        }
        hidden.add(legion);
        // Pinned whatever its state: an untrusted one Legion used holds transcripts too.
        if (reach) for (let dir = dirname(legion); dir !== root && isInside(dir, root); dir = dirname(dir)) pinned.add(dir);
      }
      let revokedBefore: string | undefined;
      if (moved.length > 0) {
        const when = new Date().toISOString();
        const revoked = revokeEntries(registryFile, moved, `not where it was trusted (moved or replaced) when a sandboxed command was to run in ${root} at ${when}; review .legion/ and run legion trust there again`);
        // Fail closed: an entry that could not be revoked would verify again once moved back.
        if (!revoked.ok) return refuse(revoked.error);
        revokedBefore = `blocked by the sandbox: trust revoked for ${moved.map((e) => join(e.root, '.legion')).join(', ')}: not where it was trusted (moved or replaced since); review it and run legion trust there again`;
      }
      return {
        ok: true,
        plan: {
          release,
          hiddenDirs: [...hidden],
          pinned: [...pinned].sort((a, b) => a.length - b.length),
          serial,
          ...(revokedBefore ? { revokedBefore } : {}),
        },
      };
    },
    after(root, plan) {
      const registry = read();
      // Unreadable: the record stays, so the trust of what this call could reach is withheld until a check can revoke it.
      if (!registry.ok) return `blocked by the sandbox: the trust registry could not be read after the call (${registry.error}): every workspace is untrusted until it is fixed; ${REGISTRY_FIX}`;
      const moved: RegistryEntry[] = [];
      const newer: RegistryEntry[] = [];
      for (const entry of registry.registry.workspaces) {
        const legion = join(entry.root, '.legion');
        if (entry.state !== 'trusted' || !isInside(legion, root) || isInside(root, legion)) continue;
        if (!inPlace(entry)) moved.push(entry);
        else if (exposedTo(entry, { pid: process.pid, root, serial: plan.serial })) newer.push(entry);
      }
      let unrevoked = false;
      const lines = plan.revokedBefore ? [plan.revokedBefore] : [];
      const when = new Date().toISOString();
      for (const [entries, why] of [
        [moved, `moved or replaced while a sandboxed command ran in ${root} (ended ${when})`],
        [newer, `trusted while a sandboxed command in ${root} could write to it (ended ${when})`],
      ] as const) {
        if (entries.length === 0) continue;
        const revoked = revokeEntries(registryFile, entries, `${why}; review .legion/ and run legion trust there again`);
        if (!revoked.ok) unrevoked = true;
        const names = entries.map((e) => join(e.root, '.legion')).join(', ');
        lines.push(revoked.ok
          ? `blocked by the sandbox: trust revoked for ${names}: ${why.split(' (')[0]}; review it and run legion trust there again`
          : `blocked by the sandbox: ${names} ${why.split(' (')[0]}, and its trust could not be revoked (${revoked.error}): run legion trust --revoke there`);
      }
      // Not revoked: the record stays, so they are not honoured while this process lives and are revoked once it is gone (settleDeadCalls).
      if (!unrevoked) plan.release();
      return lines.length > 0 ? lines.join('\n') : undefined;
    },
  };
}

/** Why a call's record could not be made that also stops any trust from being registered there. */
const UNWRITABLE = new Set(['ENOENT', 'ENOTDIR', 'EROFS', 'EACCES', 'EPERM']);

/** The entry's `.legion/` is at its registered real path (no link on the way) and is the same folder. */
function inPlace(entry: RegistryEntry): boolean {
  const legion = join(entry.root, '.legion');
  try {
    if (realpathSync(legion) !== legion) return false;
  } catch {
    return false;
  }
  return sameIdentity(entry, legionIdentity(entry.root));
}
