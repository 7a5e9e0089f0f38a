import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp';
import { REPO_ROOT, cleanAppEnv, ensureBundle } from '../helpers/bundle';
import { hasTmux, shellCommand, startTmux } from '../helpers/tmux';

const flat = (screen: string): string => screen.replace(/\s+/g, ' ');

/**
 * A newcomer's first minute, through `npm start`'s script in a real terminal: the demo runs in
 * a scratch workspace of its own (never the checkout), the empty home lane welcomes and names
 * that workspace, and the first approval says why it asks (the shipped writes-ask rule).
 */
test('tmux: npm start runs the demo in its own workspace, welcomes, and the approval queue says why a write asks', { skip: !hasTmux() && 'tmux is not installed', timeout: 120_000 }, async () => {
  ensureBundle({ e2e: true });
  const scratch = await makeTempDir('legion-start-e2e-');
  const workspace = join(scratch.dir, 'start-workspace');
  const env = cleanAppEnv({ LEGION_START_WORKSPACE: workspace, HOME: scratch.dir });
  const tmux = startTmux({ command: shellCommand([process.execPath, 'scripts/start.mjs']), cwd: REPO_ROOT, env, width: 120, height: 40 });
  try {
    let screen = await tmux.waitFor(/Welcome to Legion\./, 30_000, 'the welcome');
    const text = flat(screen);
    assert.match(text, /Demo: no API key is set, so the replies are scripted/);
    assert.match(text, /\(or press Ctrl\+Y\)\. F1 lists every key\./);
    assert.ok(text.includes(`Workspace: ${workspace}`), 'the first screen names the scratch workspace');

    tmux.type('write a note');
    tmux.keys('Enter');
    // The queue may open (by itself) a frame before its first row is drawn: wait for the row.
    screen = await tmux.waitFor(/Approval queue[\s\S]*file_write notes\/demo\.md/, 30_000, 'the write in the approval queue');
    assert.match(screen, /file_write notes\/demo\.md {2}· rule writes-ask: Writing changes your files: you decide/);
    tmux.keys('y');
    await tmux.waitFor(() => existsSync(join(workspace, 'notes', 'demo.md')), 30_000, 'the note in the scratch workspace');
    assert.ok(readFileSync(join(workspace, 'notes', 'demo.md'), 'utf8').length > 0);
    assert.ok(existsSync(join(workspace, '.legion')), 'the scratch workspace holds the run');
    tmux.keys('C-c', 'C-c');
    await tmux.waitFor(() => tmux.dead(), 10_000, 'the app to exit');
  } finally {
    tmux.kill();
    await scratch.cleanup();
  }
});
