import type { Command } from '../command';
import { LegionError } from '../../errors';
import { layoutFor } from '../../storage/layout';
import { checkWorkspace } from '../../storage/workspace';
import { createRunStore } from '../../session/run-store';
import { randomIds, systemClock } from '../../session/ids';
import { runStats } from '../../session/run-stats';
import { clip, formatStamp, formatTable } from '../../session/format';

/** `legion runs`: the workspace's runs, newest first. Read-only; takes no lock. */
export const runsCommand: Command = {
  name: 'runs',
  usage: 'legion runs',
  summary: 'list the runs of this workspace, newest first',
  flags: {},
  async run({ args, io, workspaceRoot }) {
    if (args.positionals.length > 0) throw new LegionError(`legion runs takes no arguments (got "${args.positionals[0]}")`, 2);
    const layout = layoutFor(workspaceRoot);
    const check = await checkWorkspace(layout);
    if (!check.ok) throw new LegionError(check.error);
    const { runs, damaged } = await createRunStore(layout, systemClock, randomIds).scan();
    for (const d of damaged) io.stderr(`legion: warning: ${d.error}\n`);
    if (runs.length === 0) {
      io.stdout('no runs yet: start one with `legion` or `legion run <message>`\n');
      return 0;
    }
    const stats = await Promise.all(runs.map((r) => runStats(layout, r.id)));
    const rows = runs.map((r, i) => [r.id, formatStamp(r.createdAt), String(stats[i]!.sessions), String(stats[i]!.messages), clip(r.title ?? '', 60)]);
    io.stdout(formatTable(['RUN', 'CREATED', 'SESSIONS', 'MESSAGES', 'TITLE'], rows, [2, 3]));
    return 0;
  },
};
