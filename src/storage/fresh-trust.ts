import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { revokeWorkspaceTrust, writeWorkspaceTrust, type TrustPlace } from './workspace-trust';

/**
 * What a command that created `.legion/` wrote into it before trusting it: folders (walked) and
 * files, relative to `.legion/`. The trust marker (`trusted`) is always part of it.
 */
export interface LegionSkeleton {
  readonly folders: readonly string[];
  readonly files: readonly string[];
}

export type FreshTrust =
  | { readonly ok: true }
  | { readonly ok: false; readonly kind: 'not-written' | 'stray'; readonly error: string };

/**
 * Trust a `.legion/` this process has just created (legion init, a first start, legion engine up):
 * trusted without review because it holds only what Legion wrote. Until its trust is registered,
 * no sandboxed call hides the folder, so a command of an enclosing workspace could have written
 * into it and ended before the registration: checked once registered (hidden from every call from
 * then on; one still running is caught by the registry as `exposed`), anything beyond `skeleton`
 * revokes the trust and is named (docs/workspace-trust.md#when-a-workspace-becomes-trusted).
 */
export async function trustFreshLegion(place: TrustPlace, legionDir: string, skeleton: LegionSkeleton): Promise<FreshTrust> {
  const marked = await writeWorkspaceTrust(place);
  if (!marked.ok) return { ok: false, kind: 'not-written', error: marked.error };
  const stray = await strayEntries(legionDir, skeleton);
  if (stray.length === 0) return { ok: true };
  await revokeWorkspaceTrust(place);
  return {
    ok: false,
    kind: 'stray',
    error: `${stray.map((p) => `.legion/${p}`).join(', ')} appeared while Legion created ${legionDir} (another program, or a command of an enclosing workspace)`,
  };
}

/** What `.legion/` holds beyond the skeleton, relative to it, sorted. */
async function strayEntries(legionDir: string, skeleton: LegionSkeleton): Promise<string[]> {
  const folders = new Set(skeleton.folders);
  const files = new Set([...skeleton.files, 'trusted']);
  const stray: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const name = relative(legionDir, path);
      if (entry.isDirectory() && folders.has(name)) await walk(path);
      else if (!(entry.isFile() && files.has(name))) stray.push(name);
    }
  };
  await walk(legionDir);
  return stray.sort();
}
