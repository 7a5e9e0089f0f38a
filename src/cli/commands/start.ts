import type { Command } from '../command';
import { LegionError } from '../../errors';

export const startCommand: Command = {
  name: 'start',
  usage: 'legion [start] [--run <id> | --new] [--attach | --no-attach]',
  summary: 'the TUI (default); resumes the latest run, creates .legion/ on first use',
  flags: { run: 'value', new: 'boolean', attach: 'boolean', 'no-attach': 'boolean' },
  async run(context) {
    if (!context.startTui) throw new LegionError('the TUI is not available in this build');
    if (!context.io.isTTY) throw new LegionError('the TUI needs a terminal; use `legion run <message>` for headless use', 2);
    return context.startTui({ context });
  },
};
