import type { Screen } from '../src/runtime/core-api';
import { LegionError } from '../src/errors';
import { buildKeymap } from './keymap';
import { runTui } from './run-tui';

export { INK_MAX_FPS } from './render-options';
export { warmFirstRender } from './warm-render';

/**
 * The full-screen UI as the CLI starts it (src/cli/start-screen.ts hands it a composed run).
 * A bad keymap in the config stops it before anything is drawn: the run is closed again and
 * the error is one line (exit 2).
 */
export const screen: Screen = {
  async run(session, options) {
    const keymap = buildKeymap(session.config.keymap);
    if (!keymap.ok) {
      await session.close('config error');
      throw new LegionError(keymap.error, 2);
    }
    return runTui(session, keymap.keymap, options);
  },
};
