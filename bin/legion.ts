// The bundle entry: the composition root that joins the headless core (src/) and the TUI
// (components/). It is the only place that may import both.
import { main } from '../src/cli/main';
import { processIo } from '../src/cli/io';

const code = await main(process.argv.slice(2), {
  io: processIo(),
  startTui: async (options) => {
    // The TUI only starts on a terminal (the start command checks), so an inherited CI flag
    // must not put Ink in its CI mode, which draws no frame until exit. Ink reads the flag
    // when its module is first evaluated: here, at this lazy import.
    delete process.env.CI;
    delete process.env.CONTINUOUS_INTEGRATION;
    const { startTui } = await import('../components/start-tui');
    return startTui(options);
  },
});
process.exitCode = code;
