import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp';
import { bundlePath as BUNDLE, cleanAppEnv, ensureBundle } from '../helpers/bundle';
import { hasTmux, shellCommand, startTmux } from '../helpers/tmux';

const SCRIPT = `version: 1
defaults: { chunkSize: 64, delayMs: 0 }
replies:
  - { agent: resource-agent, on: message, text: "resource-agent here." }
  - { agent: ur-agent, on: message, text: "ur-agent at home." }
`;

/**
 * The home lane (docs/design.md#participants-sessions-runs) through the built CLI: after
 * `legion run --to resource-agent`, `legion` opens with `user → ur-agent · default` first and
 * focused (no messages yet), the resource-agent lane beside it, and what the user types goes
 * to ur-agent.
 */
test('tmux: after legion run --to resource-agent, the TUI opens on the home lane and typing goes to ur-agent', { skip: !hasTmux() && 'tmux is not installed', timeout: 90_000 }, async () => {
  ensureBundle({ e2e: true });
  const ws = await makeTempDir('legion-home-e2e-');
  const script = join(ws.dir, 'script.yaml');
  writeFileSync(script, SCRIPT);
  const env = cleanAppEnv({ LEGION_FAUX_SCRIPT: script });
  try {
    const run = spawnSync(process.execPath, [BUNDLE, '--cwd', ws.dir, 'run', '--to', 'resource-agent', 'make a scribe'], { env, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, 'resource-agent here.\n');

    const tui = startTmux({ command: shellCommand([process.execPath, BUNDLE, '--cwd', ws.dir]), cwd: ws.dir, env, width: 120, height: 30 });
    try {
      const screen = await tui.waitFor((s) => /user → ur-agent · default/.test(s) && /^legion · run /m.test(s), 15_000, 'the first frame');
      const header = screen.split('\n').find((l) => /user → ur-agent · default/.test(l)) ?? '';
      assert.match(header, /^▶ user → ur-agent · default/, 'the home lane is first and focused');
      assert.match(header, /user → resource-agent · default/, 'the resource-agent lane follows beside it');
      assert.doesNotMatch(screen, /▶ user → resource-agent/);
      assert.match(screen, /› +message ur-agent…/);
      tui.type('hello home');
      tui.keys('Enter');
      await tui.waitFor(/ur-agent at home\./, 15_000, "ur-agent's answer");
      tui.keys('C-c');
      tui.keys('C-c');
      await tui.waitFor(() => tui.dead(), 10_000, 'the app to exit');
      const runs = readdirSync(join(ws.dir, '.legion', 'runs'));
      const home = readFileSync(join(ws.dir, '.legion', 'runs', runs[0]!, 'sessions', 'session-user__ur-agent__default.jsonl'), 'utf8');
      assert.match(home, /hello home/);
    } finally {
      tui.kill();
    }
  } finally {
    await ws.cleanup();
  }
});
