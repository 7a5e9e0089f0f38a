import { workspaceTrustOf } from '../workspace-root';
import { hostname } from 'node:os';
import type { Command } from '../command';
import { LegionError } from '../../errors';
import { layoutFor, type Layout } from '../../storage/layout';
import { checkWorkspace } from '../../storage/workspace';
import { defaultConfigFiles, loadConfig } from '../../config/load';
import { acquireRunLock } from '../../session/lock';
import { createRunStore } from '../../session/run-store';
import { randomIds, systemClock } from '../../session/ids';
import { formatStamp, formatTable } from '../../session/format';
import type { LoadedRun, RunLock } from '../../session/types';
import { CHECKPOINT_ID } from '../../checkpoints/ids';
import type { UndoNote } from '../../checkpoints/undo';
import type { CheckpointStore } from '../../checkpoints/store';
import type { UndoService } from '../../checkpoints/undo-service';
import type { CliIo } from '../io';
import { persistScrubbed } from '../../runtime/journal';
import { secretsFromEnv } from '../../authz/redact';
import { createSecretScrubber, type SecretScrubber } from '../../authz/scrub';

/**
 * `legion undo` (docs/undo.md): without --yes it only shows what would be restored (the diff);
 * with --yes it restores. The runs whose agents are told must not be open in another Legion
 * (their lock is taken for the restore), so an undo never races agents at work.
 */
export const undoCommand: Command = {
  name: 'undo',
  usage: 'legion undo [--session <id>] [--to <checkpointId>] [--yes] [--force] [--list] [--prune]',
  summary: 'show and restore the files as they were before an agent\'s tool batch (checkpoints)',
  flags: { session: 'value', to: 'value', yes: 'boolean', force: 'boolean', list: 'boolean', prune: 'boolean' },
  async run({ args, io, workspaceRoot, appDir }) {
    if (args.positionals.length > 0) throw new LegionError(`legion undo takes no arguments (got "${args.positionals[0]}"); use --to <checkpointId>`, 2);
    const to = args.flags.get('to');
    if (typeof to === 'string' && !CHECKPOINT_ID.test(to)) throw new LegionError(`--to: "${to}" is not a checkpoint id (like ck-mwtnsjut-67fc; see legion undo --list)`, 2);
    const wanted = args.flags.get('session');
    const sessionId = typeof wanted === 'string' ? (wanted.startsWith('session-') ? wanted : `session-${wanted}`) : undefined;
    const layout = layoutFor(workspaceRoot);
    const check = await checkWorkspace(layout);
    if (!check.ok) throw new LegionError(check.error);
    if (!check.exists) throw new LegionError(`no Legion workspace in ${workspaceRoot}: nothing to undo`);
    const loaded = await loadConfig(defaultConfigFiles(appDir, workspaceRoot, io.env.HOME ?? '', await workspaceTrustOf({ workspaceRoot, io })));
    if (!loaded.ok) throw new LegionError(loaded.error);
    const config = loaded.config.checkpoints;
    // The checkpoint code loads with this command only, not with every start of Legion.
    const [{ openCheckpointStore }, { createUndoService }, { planLines }, { pruneCheckpoints }, { combinedUndo }, { worktreesWithCheckpoints }] = await Promise.all([
      import('../../checkpoints/store'), import('../../checkpoints/undo-service'), import('../../checkpoints/checkpoint-text'), import('../../checkpoints/prune'),
      import('../../checkpoints/undo-combined'), import('../../worktrees/checkpoints'),
    ]);
    const warn = (m: string): void => io.stderr(`legion: ${m}\n`);
    const store = await openCheckpointStore({ workspaceRoot, maxFileBytes: config.maxFileBytes, warn });
    // Isolated sessions' checkpoints are rooted in their worktrees (docs/worktrees.md#checkpoints-and-undo).
    const stores: CheckpointStore[] = [store];
    try {
      if (args.flags.get('prune') === true) {
        const pruned = await pruneCheckpoints(store, { keepDays: config.keepDays, maxRepoBytes: config.maxRepoBytes }, systemClock());
        io.stdout(`pruned ${pruned.removed} checkpoint(s), ${pruned.kept} kept; ${mb(pruned.bytesBefore)} → ${mb(pruned.bytesAfter)}\n`);
        return 0;
      }
      const locks: RunLock[] = [];
      const deliver = noteDelivery(layout, createSecretScrubber(secretsFromEnv(io.env)));
      const inWorktrees = new Map<string, UndoService>();
      const service = combinedUndo(async (session) => {
        const services = [createUndoService({ store, runId: 'cli', isBusy: () => false, deliver })];
        for (const found of await worktreesWithCheckpoints(layout.worktreesDir, session)) {
          let one = inWorktrees.get(found.sessionId);
          if (!one) {
            const inWorktree = await openCheckpointStore({ workspaceRoot: found.root, dir: found.dir, maxFileBytes: config.maxFileBytes, warn });
            stores.push(inWorktree);
            inWorktrees.set(found.sessionId, one = createUndoService({ store: inWorktree, runId: 'cli', isBusy: () => false, deliver }));
          }
          services.push(one);
        }
        return services;
      });
      if (args.flags.get('list') === true) return await list(io, await service.list(sessionId));
      const shown = await service.preview({ ...(typeof to === 'string' ? { id: to } : {}), ...(sessionId ? { sessionId } : {}) });
      if (!shown.ok) throw new LegionError(shown.error);
      const { plan, diff, conflictDiff } = shown.preview;
      const force = args.flags.get('force') === true;
      io.stdout(planLines(plan, force).join('\n') + '\n');
      if (diff) io.stdout('\n' + diff);
      if (force && conflictDiff) io.stdout('\n' + conflictDiff);
      if (args.flags.get('yes') !== true) {
        io.stdout(`\nnothing changed yet: run again with --yes to restore${plan.conflicts.length > 0 && !force ? ' (add --force to restore the files changed by hand too)' : ''}\n`);
        return 0;
      }
      // The runs whose agents will be told: not open elsewhere (an agent at work would race the restore).
      const files = force ? [...plan.restore, ...plan.conflicts] : plan.restore;
      for (const runId of new Set(files.flatMap((f) => f.by.map((b) => b.runId)))) {
        const locked = acquireRunLock(layout, runId, { pid: process.pid, hostname: hostname(), now: systemClock() });
        if (!locked.ok) {
          if (/does not exist/.test(locked.error)) continue;
          for (const lock of locks) lock.release();
          throw new LegionError(`${locked.error}; or undo from that Legion's TUI (key u on the lane)`);
        }
        locks.push(locked.lock);
      }
      try {
        const outcome = await service.restore(plan, { includeConflicts: force });
        if (!outcome.ok) throw new LegionError(outcome.error);
        io.stdout(`restored ${outcome.restored.length} file(s); this restore is checkpoint ${outcome.checkpointId} (legion undo --to ${outcome.checkpointId} --yes takes it back)\n`);
        if (outcome.kept.length > 0) io.stdout(`kept ${outcome.kept.length} file(s) changed by hand: ${outcome.kept.join(', ')}\n`);
        for (const note of outcome.notes) {
          const told = !outcome.undelivered?.includes(note);
          io.stdout(told ? `told ${note.participantId} in ${note.sessionId}\n` : `could not tell ${note.participantId} in ${note.sessionId} (run ${note.runId})\n`);
        }
        return 0;
      } finally {
        for (const lock of locks) lock.release();
      }
    } finally {
      for (const one of stores) one.close();
    }
  },
};

async function list(io: CliIo, checkpoints: readonly import('../../checkpoints/records').Checkpoint[]): Promise<number> {
  if (checkpoints.length === 0) {
    io.stdout('no checkpoints yet\n');
    return 0;
  }
  const { changedFilesText, checkpointOrigin } = await import('../../checkpoints/checkpoint-text');
  const rows = checkpoints.map((c) => [c.id, formatStamp(c.at), c.sessionId.replace(/^session-/, ''), checkpointOrigin(c), changedFilesText(c)]);
  io.stdout(formatTable(['CHECKPOINT', 'AT', 'SESSION', 'BY', 'CHANGED'], rows));
  return 0;
}

/**
 * Tell agents in their sessions: each run is loaded once (its lock is held by the caller; open
 * calls are left as they are, a pending approval still resumes) and the note appended, scrubbed of
 * the environment's secrets as a running Legion's journal would (a note names files, and a file's
 * name can be anything an agent chose).
 */
function noteDelivery(layout: Layout, scrub: SecretScrubber): (note: UndoNote) => Promise<boolean> {
  const runs = createRunStore(layout, systemClock, randomIds);
  const loaded = new Map<string, Promise<LoadedRun | undefined>>();
  const load = async (runId: string): Promise<LoadedRun | undefined> => {
    const run = await runs.get(runId);
    if (!run) return undefined;
    return runs.load(run, systemClock(), { leaveOpen: (open) => new Set(open.map((o) => o.sessionId)) });
  };
  return async (note) => {
    if (!loaded.has(note.runId)) loaded.set(note.runId, load(note.runId).catch(() => undefined));
    const session = (await loaded.get(note.runId))?.sessions.get(note.sessionId);
    if (!session) return false;
    try {
      persistScrubbed(session, { role: 'user', content: [{ type: 'text', text: note.text }], at: systemClock().toISOString() }, scrub);
      return true;
    } catch {
      return false;
    }
  };
}

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
