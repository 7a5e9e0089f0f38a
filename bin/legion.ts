// The bundle entry: the composition root that joins the headless core (src/) and the TUI
// (components/). It is the only place that may import both.
import { main } from '../src/cli/main';
import { processIo } from '../src/cli/io';

const code = await main(process.argv.slice(2), {
  io: processIo(),
  startTui: async (options) => {
    const { startTui } = await import('../components/start-tui');
    return startTui(options);
  },
});
process.exitCode = code;
