import '../helpers/own-home';
import { test } from 'node:test';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hasTmux, initWorkspace, withWorkspace } from './modals-support';
import { MODES, inMode } from './tui-modes';
import { SCENARIOS } from './tui-scenarios';

/**
 * Every TUI scenario (tui-scenarios.ts: first screen, lanes, approvals, modals and switcher,
 * history, a worktree merge request) in both modes: local, and attached to a real `legion serve` (docs/serve.md#attaching).
 * The built CLI in tmux; each test a fresh workspace.
 */
const skip = hasTmux() ? false : 'tmux is not installed';

for (const scenario of SCENARIOS) {
  for (const mode of MODES) {
    test(`${mode}: ${scenario.name}`, { skip, timeout: 150_000 }, async () => {
      await withWorkspace(async (dir) => {
        await initWorkspace(dir, scenario.agents);
        const script = join(dir, 'script.yaml');
        await writeFile(script, scenario.script);
        await inMode(mode, dir, script, scenario.options ?? {}, (ctx) => scenario.run(ctx));
      });
    });
  }
}
