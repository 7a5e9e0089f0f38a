import { join, relative } from 'node:path';
import type { Layout } from '../storage/layout';
import { layoutFor } from '../storage/layout';
import { checkWorkspace, ensureWorkspace } from '../storage/workspace';
import { LegionError } from '../errors';
import { loadTemplates } from './templates';
import { createParticipantStore } from './store';
import { TRUSTED } from '../storage/workspace-trust';
import { trustFreshLegion, type LegionSkeleton } from '../storage/fresh-trust';

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
  // The folder did not exist: the user made it, through Legion, so it is theirs to trust, as long as
  // it holds only what ensureWorkspace made (empty folders, the workspace marker).
  const place = { workspaceRoot: options.workspaceRoot, userDir: options.userDir };
  const trusted = check.exists ? null : await trustFreshLegion(place, layout.legionDir, skeletonOf(layout));
  const trustProblem = !trusted || trusted.ok ? undefined
    : trusted.kind === 'stray' ? `not trusted: ${trusted.error}: review it, then run legion trust`
    : `could not mark ${layout.legionDir} trusted (${trusted.error}): fix that, then run legion trust`;
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

/** What ensureWorkspace makes in a new `.legion/`, relative to it. */
function skeletonOf(layout: Layout): LegionSkeleton {
  const rel = (path: string) => relative(layout.legionDir, path);
  return {
    folders: [layout.participantsDir, join(layout.participantsDir, '..'), layout.runsDir, layout.auditDir].map(rel),
    files: [rel(layout.marker)],
  };
}
