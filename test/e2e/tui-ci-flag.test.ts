import '../helpers/own-home';
import { test } from 'node:test';
import { resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { makeTempDir } from '../helpers/tmp';
import { hasTmux, shellCommand, startTmux } from '../helpers/tmux';

const BUNDLE = resolve(process.cwd(), 'dist', 'legion.js');

// Ink draws nothing until exit when it believes it runs in CI (CI=true). The TUI only starts on
// a terminal, so an inherited CI flag (CI runners, some dev containers) must not blank it.
test('the TUI draws frames in a terminal even when CI=true is inherited', { skip: !hasTmux() && 'tmux is not installed', timeout: 60_000 }, async () => {
  if (process.env.LEGION_TEST !== '1') assert.equal(spawnSync(process.execPath, ['scripts/build.mjs']).status, 0);
  const ws = await makeTempDir('legion-ci-flag-');
  const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm-256color', CI: 'true', CONTINUOUS_INTEGRATION: 'true' };
  for (const k of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'LEGION_PROVIDER', 'LEGION_FAUX_SCRIPT', 'TMUX']) delete env[k];
  const tmux = startTmux({ command: shellCommand([process.execPath, BUNDLE, '--cwd', ws.dir]), cwd: ws.dir, env, width: 100, height: 30 });
  try {
    await tmux.waitFor(/message ur-agent/, 15_000, 'the first frame');
    tmux.type('hello');
    await tmux.waitFor(/› hello/, 10_000, 'the typed text drawn live');
    tmux.keys('C-c', 'C-c');
    await tmux.waitFor(() => tmux.dead(), 10_000, 'the app to exit');
  } finally {
    tmux.kill();
    await ws.cleanup();
  }
});
