import type { Command } from '../command';
import { LegionError } from '../../errors';
import { complete, SHELLS, workspaceNames } from '../completion/complete';
import { completionScript } from '../completion/scripts';

const USAGE = 'legion completion bash|zsh|fish';

/**
 * `legion completion <shell>` prints the shell's completion script; the scripts call the
 * hidden `legion completion __complete -- <words…>`, which prints one candidate per line.
 * `commands` is the CLI's command list (passed in: the list includes this command).
 */
export const completionCommand = (commands: () => Promise<readonly Command[]>): Command => ({
  name: 'completion',
  usage: USAGE,
  summary: 'print a shell completion script (commands, flags, agent ids, run ids, workflow names); see docs/cli-conventions.md for the install line',
  flags: {},
  async run({ args, io, appDir }) {
    const [what, ...words] = args.positionals;
    if (what === '__complete') {
      const candidates = await complete(words.length > 0 ? words : [''], await commands(), io.cwd, (root) => workspaceNames(root, appDir));
      io.stdout(candidates.map((c) => `${c}\n`).join(''));
      return 0;
    }
    if (!what || !(SHELLS as readonly string[]).includes(what) || words.length > 0) {
      throw new LegionError(what ? `unknown shell "${[what, ...words].join(' ')}"; usage: ${USAGE}` : `usage: ${USAGE}`, 2);
    }
    io.stdout(completionScript(what as (typeof SHELLS)[number]));
    return 0;
  },
});
