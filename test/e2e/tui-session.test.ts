import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { makeTempDir } from '../helpers/tmp';
import { bundlePath as BUNDLE, cleanAppEnv, ensureBundle } from '../helpers/bundle';
import { hasTmux, shellCommand, startTmux } from '../helpers/tmux';

const ROOT = process.cwd();
const SCRIPT = resolve(ROOT, 'test', 'fixtures', 'faux', 'tui-e2e.yaml');

const headerOf = (screen: string, pattern: RegExp): string | undefined => screen.split('\n').find((l) => pattern.test(l));

test('tmux: first frame, send, a delegate lane opens and streams, Tab, Esc interrupts, Ctrl+C twice quits, restart shows the history', { skip: !hasTmux() && 'tmux is not installed', timeout: 90_000 }, async () => {
  ensureBundle({ e2e: true, rebuild: 'always' });
  const ws = await makeTempDir('legion-tui-e2e-');
  const command = shellCommand([process.execPath, BUNDLE, '--cwd', ws.dir]);
  const tmux = startTmux({ command, cwd: ws.dir, env: cleanAppEnv({ LEGION_FAUX_SCRIPT: SCRIPT }), width: 120, height: 40 });
  try {
    // First frame: the user's lane, the composer and the status bar.
    let screen = await tmux.waitFor((s) => /▶ user → ur-agent · default/.test(s) && /^legion · run /m.test(s), 15_000, 'the first frame');
    assert.doesNotMatch(screen, /DEMO/, 'a named faux script is not the demo');
    assert.match(screen, /› +message ur-agent…/);

    // Send: the delegate's lane opens beside ours and streams.
    tmux.type('hello e2e');
    tmux.keys('Enter');
    screen = await tmux.waitFor(/ur-agent → resource-agent · files/, 15_000, 'the delegate lane');
    screen = await tmux.waitFor(/│Counting one two/, 15_000, 'streamed text in the delegate lane');
    assert.match(screen, /^› hello e2e/m);
    assert.match(screen, /Delegating now to resource-agent\./);
    assert.match(screen, /↳ ur-agent → resource-agent · files/, 'activity row in the user lane');
    const first = (await tmux.waitFor(/│Counting one two three four five/, 15_000, 'more streamed text'));
    const later = await tmux.waitFor((s) => s !== first && /│Counting one two three four five six/.test(s), 15_000, 'the stream to grow');
    assert.ok(later.length > 0);

    // Tab focuses the delegate lane; Esc interrupts its turn.
    tmux.keys('Tab');
    screen = await tmux.waitFor(/│▶ ur-agent → resource-agent · files/, 5_000, 'focus on the delegate lane');
    tmux.keys('Escape');
    screen = await tmux.waitFor(/The delegate stopped/, 15_000, "ur-agent's answer after the interrupt");
    assert.doesNotMatch(screen, /thirty done/, 'the stream was cut short');
    assert.match(headerOf(screen, /resource-agent · files/) ?? '', /idle/);

    // Ctrl+C twice quits; the terminal is restored.
    tmux.keys('C-c');
    await tmux.waitFor(/press Ctrl\+C again to quit/, 5_000);
    tmux.keys('C-c');
    await tmux.waitFor(() => tmux.dead(), 10_000, 'the app to exit');
    assert.doesNotMatch(tmux.capture(), /legion · run/, 'the alternate screen was left');

    // The run is on disk with valid histories; a restart resumes it with its lanes.
    const runs = readdirSync(join(ws.dir, '.legion', 'runs'));
    assert.equal(runs.length, 1);
    const sessions = readdirSync(join(ws.dir, '.legion', 'runs', runs[0]!, 'sessions'));
    assert.ok(sessions.includes('session-ur-agent__resource-agent__files.jsonl'), sessions.join(', '));
    const lines = readFileSync(join(ws.dir, '.legion', 'runs', runs[0]!, 'sessions', 'session-user__ur-agent__default.jsonl'), 'utf8').trim().split('\n');
    assert.ok(lines.length >= 3);
    tmux.respawn(command);
    screen = await tmux.waitFor((s) => /▶ user → ur-agent · default/.test(s) && /\(resumed\)/.test(s), 15_000, 'the resumed run');
    assert.match(screen, /^› hello e2e/m);
    assert.match(screen, /The delegate stopped/);
    assert.match(screen, /ur-agent → resource-agent · files/);
    assert.match(screen, /│Counting one two/);
    tmux.keys('C-c');
    tmux.keys('C-c');
    await tmux.waitFor(() => tmux.dead(), 10_000, 'the app to exit');
  } finally {
    tmux.kill();
    await ws.cleanup();
  }
});
