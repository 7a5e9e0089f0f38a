// The bundle entry: the composition root that joins the headless core (src/) and the TUI
// (components/). It is the only place that may import both.
import { main } from '../src/cli/main';
import { processIo } from '../src/cli/io';
import { startScreen } from '../src/cli/start-screen';
import { shippedConfig, warmStartParsers } from '../src/cli/snapshot-warm';
import { warmCompose } from '../src/cli/warm-compose';
import { forgetBuiltSchemas } from '../src/storage/lazy-schema';
import { findAppDir } from '../src/cli/app-dir';

/**
 * Set by dist/legion.js (scripts/legion-loader.mjs), which runs the bundle through V8's code
 * cache: told when the full-screen UI starts, so the cache it writes holds the UI's code too.
 * Set by the snapshot entry (scripts/snapshot-entry.js) with `snapshot`: the bundle is being
 * evaluated into a V8 startup snapshot; it is handed the function that runs a start and the
 * modules to evaluate now, instead of starting; `throwaway` runs work whose reads of the machine
 * are not recorded (scripts/snapshot-entry.cjs). Absent under tsx.
 */
declare const __legionStart:
  | {
    tuiStarted(): void;
    snapshot?: (run: () => void, preload: () => Promise<unknown>) => void;
    throwaway?: <T>(work: () => Promise<T>) => Promise<T>;
  }
  | undefined;

const loadTui = () => import('../components/start-tui');

function run(): void {
  void main(process.argv.slice(2), {
    io: processIo(),
    startTui: (options) =>
      startScreen(options.context, async () => {
        // The TUI only starts on a terminal (the start command checks), so an inherited CI flag
        // must not put Ink in its CI mode, which draws no frame until exit. Ink reads the flag
        // when its module is first evaluated: here, at this lazy import.
        delete process.env.CI;
        delete process.env.CONTINUOUS_INTEGRATION;
        if (typeof __legionStart !== 'undefined') __legionStart.tuiStarted();
        return (await loadTui()).screen;
      }),
  }).then((code) => {
    process.exitCode = code;
  });
}

// In a snapshot: the TUI's modules evaluated, the parsers of the shipped files compiled
// (src/cli/snapshot-warm.ts), the first screen's render path compiled (components/warm-render.tsx),
// and the composition of a run compiled on a throwaway one (src/cli/warm-compose.ts).
if (typeof __legionStart !== 'undefined' && __legionStart.snapshot) {
  const { throwaway } = __legionStart;
  __legionStart.snapshot(run, async () => {
    const tui = await loadTui();
    const parsed = warmStartParsers();
    if (!(await tui.warmFirstRender(shippedConfig())).toLowerCase().includes('legion')) throw new Error('snapshot warm-up: the first screen did not render');
    if (!throwaway) throw new Error('snapshot warm-up: the snapshot entry has no throwaway hook');
    // The first screen again, of the composed throwaway run: the real core's reads compiled too.
    await throwaway(() => warmCompose(findAppDir(), undefined, (app) => tui.warmFirstRender(app.config, app)));
    // Last: the schemas built on first use by the warm-up are not kept in the heap (src/storage/lazy-schema.ts).
    forgetBuiltSchemas();
    return [tui, parsed];
  });
} else run();
