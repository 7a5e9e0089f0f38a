import { workspaceTrustOf } from '../workspace-root';
import { join } from 'node:path';
import type { Command } from '../command';
import { LegionError } from '../../errors';
import { layoutFor } from '../../storage/layout';
import { checkWorkspace } from '../../storage/workspace';
import { createParticipantStore } from '../../collective/store';
import { loadTemplates } from '../../collective/templates';
import { clip, formatTable } from '../../session/format';

/**
 * `legion workflows`: the workflows this workspace can run (docs/workflows.md), checked against
 * its collective (the default collective before `legion init`). Read-only; takes no lock.
 * A broken file is listed with its `file:line` error and makes the exit code 1.
 */
export const workflowsCommand: Command = {
  name: 'workflows',
  usage: 'legion workflows [--json]',
  summary: 'list the workflows (.legion/workflows/ and the shipped ones): name, description, steps, file',
  flags: { json: 'boolean' },
  async run({ args, io, workspaceRoot, appDir }) {
    if (args.positionals.length > 0) throw new LegionError(`legion workflows takes no arguments (got "${args.positionals[0]}")`, 2);
    const layout = layoutFor(workspaceRoot);
    const check = await checkWorkspace(layout);
    if (!check.ok) throw new LegionError(check.error);
    // Before `legion init` the collective is the default one (config/agents/).
    let participants = check.exists ? await createParticipantStore(layout).loadAll(await workspaceTrustOf({ workspaceRoot, io })) : [];
    if (participants.length === 0) participants = await loadTemplates(join(appDir, 'config', 'agents'));
    const agents = participants.filter((p) => p.kind === 'agent' && p.status === 'active').map((p) => p.id);
    const [{ loadWorkflows, workflowDirs }, { workflowInfo }] = await Promise.all([import('../../workflows/load'), import('../../workflows/info')]);
    const infos = (await loadWorkflows(workflowDirs(appDir, workspaceRoot), { agents })).map(workflowInfo);
    if (args.flags.has('json')) {
      io.stdout(JSON.stringify(infos, null, 2) + '\n');
      return infos.some((i) => i.error) ? 1 : 0;
    }
    if (infos.length === 0) {
      io.stdout(`no workflows: add one as ${join(layout.legionDir, 'workflows', '<name>.yaml')} (see docs/workflows.md)\n`);
      return 0;
    }
    const rows = infos.map((i) => [
      i.name, i.error ? '(broken)' : i.steps.join(' '), i.file, clip(i.error ? '' : i.description, 60),
    ]);
    io.stdout(formatTable(['WORKFLOW', 'STEPS', 'FILE', 'DESCRIPTION'], rows));
    for (const info of infos) if (info.error) io.stderr(`legion: ${info.error}\n`);
    return infos.some((i) => i.error) ? 1 : 0;
  },
};
