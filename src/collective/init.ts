import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Layout } from '../storage/layout';
import { layoutFor } from '../storage/layout';
import { checkWorkspace, ensureWorkspace } from '../storage/workspace';
import { LegionError } from '../errors';
import { loadTemplates } from './templates';
import { createParticipantStore } from './store';
import { revokeWorkspaceTrust, TRUSTED, writeWorkspaceTrust } from '../storage/workspace-trust';

export interface InitOptions {
  readonly appDir: string;
  readonly workspaceRoot: string;
  /** Reset the default participants to their templates (other participants are kept). */
  readonly force?: boolean;
  /** The user's config folder (its trust key): a `.legion/` this call creates is trusted (docs/workspace-trust.md). */
  readonly userDir: string;
}

/**
 * Create `.legion/` with the default collective. Idempotent: existing participants are
 * kept unless `force`; a damaged or newer workspace is reported, never overwritten.
 */
export async function initWorkspace(options: InitOptions): Promise<{ created: string[]; messages: string[]; trustProblem?: string }> {
  const layout = layoutFor(options.workspaceRoot);
  const check = await checkWorkspace(layout);
  if (!check.ok) throw new LegionError(check.error);
  await ensureWorkspace(layout);
  // The folder did not exist: the user made it, through Legion, so it is theirs to trust.
  const place = { workspaceRoot: options.workspaceRoot, userDir: options.userDir };
  const marked = check.exists ? null : await writeWorkspaceTrust(place);
  let trustProblem = marked && !marked.ok ? `could not mark ${layout.legionDir} trusted (${marked.error}): fix that, then run legion trust` : undefined;
  if (marked?.ok) {
    // Trusted without review because it holds only what Legion wrote: checked now that it is
    // registered (hidden from every sandboxed call from here on; one running since is `exposed`).
    // Until then it was writable by a command of an enclosing workspace that has ended since.
    const stray = await strayEntries(layout);
    if (stray.length > 0) {
      await revokeWorkspaceTrust(place);
      trustProblem = `not trusted: ${stray.map((p) => `.legion/${p}`).join(', ')} appeared while Legion created ${layout.legionDir} (another program, or a command of an enclosing workspace): review it, then run legion trust`;
    }
  }
  const templates = await loadTemplates(join(options.appDir, 'config', 'agents'));
  const store = createParticipantStore(layout);
  let existing: Set<string>;
  try {
    existing = new Set((await store.loadAll(TRUSTED)).map((p) => p.id)); // ids only
  } catch (error) {
    if (!options.force) throw error;
    existing = new Set();
  }
  const created: string[] = [];
  for (const template of templates) {
    if (existing.has(template.id) && !options.force) continue;
    await store.save(template);
    created.push(template.id);
  }
  const messages = created.length
    ? [`${check.exists ? 'updated' : 'created'} ${layout.legionDir}`, ...created.map((id) => `  ${options.force && existing.has(id) ? 'reset' : 'added'} ${id}`)]
    : [`${layout.legionDir} is ready (collective unchanged; --force resets the default participants)`];
  if (trustProblem) messages.push(trustProblem);
  return { created, messages, ...(trustProblem ? { trustProblem } : {}) };
}

/**
 * What `.legion/` holds beyond the skeleton a first start makes before its trust (ensureWorkspace:
 * empty folders, the workspace marker; the trust marker), relative to it, sorted.
 */
async function strayEntries(layout: Layout): Promise<string[]> {
  const rel = (path: string) => relative(layout.legionDir, path);
  const folders = new Set([layout.participantsDir, join(layout.participantsDir, '..'), layout.runsDir, layout.auditDir].map(rel));
  const files = new Set([rel(layout.marker), 'trusted']);
  const stray: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      const name = rel(path);
      if (entry.isDirectory() && folders.has(name)) await walk(path);
      else if (!(entry.isFile() && files.has(name))) stray.push(name);
    }
  };
  await walk(layout.legionDir);
  return stray.sort();
}
