import type { Command } from '../command';
import { LegionError } from '../../errors';
import { layoutFor } from '../../storage/layout';
import { createWorktrees } from '../../worktrees/service';
import { secretPathMatcher } from '../../tools/sandbox/secrets';
import { DEFAULT_SECRET_PATTERNS } from '../../tools/sandbox/secret-patterns';
import { clip, formatStamp, formatTable } from '../../session/format';

/**
 * `legion worktrees [--prune] [--json]`: the isolated sessions of this workspace and the state of
 * their work (docs/worktrees.md#cleanup); `--prune` removes the finished ones (merged, rejected)
 * with their `legion/<session-id>` branches. A merge a killed process left half done is finished first.
 */
export const worktreesCommand: Command = {
  name: 'worktrees',
  usage: 'legion worktrees [--prune] [--json]',
  summary: 'list isolated sessions and their worktrees; --prune removes the finished ones',
  flags: { prune: 'boolean', json: 'boolean' },
  async run({ args, io, workspaceRoot }) {
    if (args.positionals.length > 0) throw new LegionError(`legion worktrees takes no arguments (got "${args.positionals[0]}")`, 2);
    const layout = layoutFor(workspaceRoot);
    // Listing, pruning and finishing a journaled merge make no snapshot; the usual secret paths all the same.
    const worktrees = createWorktrees({ workspaceRoot, dir: layout.worktreesDir, runId: '', now: () => new Date().toISOString(), leaveOut: secretPathMatcher(DEFAULT_SECRET_PATTERNS) });
    for (const sessionId of await worktrees.recover()) io.stderr(`legion: finished the merge of ${sessionId} that was interrupted\n`);
    const pruned = args.flags.has('prune') ? await worktrees.prune() : [];
    const records = await worktrees.list();
    if (args.flags.has('json')) {
      io.stdout(`${JSON.stringify({ worktrees: records, pruned }, null, 2)}\n`);
      return 0;
    }
    for (const sessionId of pruned) io.stdout(`pruned ${sessionId} (worktree and branch legion/${sessionId})\n`);
    if (records.length === 0) {
      if (pruned.length === 0) io.stdout('no isolated sessions: see docs/worktrees.md (communicator isolation: "worktree")\n');
      return 0;
    }
    const rows = records.map((r) => [
      r.sessionId, r.participantId, r.state, formatStamp(r.updatedAt),
      clip(r.state === 'conflict' ? `conflict in ${(r.conflicts ?? []).join(', ')}` : r.state === 'rejected' ? r.reason ?? '' : r.branch, 60),
    ]);
    io.stdout(formatTable(['SESSION', 'AGENT', 'STATE', 'UPDATED', 'BRANCH / NOTE'], rows));
    return 0;
  },
};
