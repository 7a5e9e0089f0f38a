import { homedir } from 'node:os';
import type { Command } from '../command';
import { initWorkspace } from '../../collective/init';
import { userConfigDir } from '../../storage/private-mode';
import { checkWorkspaceTrust } from '../../storage/workspace-trust';

export const initCommand: Command = {
  name: 'init',
  usage: 'legion init [--force]',
  summary: 'create .legion/ with the default collective (user, ur-agent, resource-agent)',
  flags: { force: 'boolean' },
  async run({ args, io, appDir, workspaceRoot }) {
    const userDir = userConfigDir(io.env, io.env.HOME || homedir());
    const result = await initWorkspace({ appDir, workspaceRoot, force: args.flags.has('force'), userDir });
    for (const line of result.messages) io.stdout(line + '\n');
    // A `.legion/` that was already there (a cloned repository's) stays untrusted (docs/workspace-trust.md).
    const trust = await checkWorkspaceTrust({ workspaceRoot, userDir });
    if (!trust.trusted && !result.trustProblem) io.stdout(`not trusted: ${trust.detail}; review it and run legion trust\n`);
    return 0;
  },
};
