import type { Command } from '../command';
import { homedir } from 'node:os';
import { initWorkspace } from '../../collective/init';
import { userConfigDir } from '../../storage/private-mode';

export const initCommand: Command = {
  name: 'init',
  usage: 'legion init [--force]',
  summary: 'create .legion/ with the default collective (user, ur-agent, resource-agent)',
  flags: { force: 'boolean' },
  async run({ args, io, appDir, workspaceRoot }) {
    const result = await initWorkspace({ appDir, workspaceRoot, force: args.flags.has('force'), userDir: userConfigDir(io.env, io.env.HOME || homedir()) });
    for (const line of result.messages) io.stdout(line + '\n');
    return 0;
  },
};
