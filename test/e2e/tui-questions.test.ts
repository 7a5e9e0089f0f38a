import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { makeTempDir } from '../helpers/tmp';
import { bundlePath as BUNDLE, cleanAppEnv, ensureBundle } from '../helpers/bundle';
import { hasTmux, shellCommand, startTmux } from '../helpers/tmux';

const ROOT = process.cwd();
const SCRIPT = resolve(ROOT, 'test', 'fixtures', 'faux', 'ask-user.yaml');

const lineOf = (screen: string, pattern: RegExp): string => screen.split('\n').find((l) => pattern.test(l)) ?? '';
const tokensOf = (screen: string): string => /^legion · .*? · (\S+ tok \S+)/m.exec(screen)?.[1] ?? '';

test('tmux: an agent asks you; its lane opens focused, Enter answers, the agent gets the answer; after a restart the token total is still there', { skip: !hasTmux() && 'tmux is not installed', timeout: 90_000 }, async () => {
  ensureBundle({ e2e: true, rebuild: 'always' });
  const ws = await makeTempDir('legion-tui-ask-');
  const command = shellCommand([process.execPath, BUNDLE, '--cwd', ws.dir]);
  const tmux = startTmux({ command, cwd: ws.dir, env: cleanAppEnv({ LEGION_FAUX_SCRIPT: SCRIPT }), width: 120, height: 30 });
  try {
    await tmux.waitFor((s) => /▶ user → ur-agent · default/.test(s) && /^legion · run /m.test(s), 15_000, 'the first frame');
    tmux.type('hello');
    tmux.keys('Enter');

    // The question's lane opens beside yours and takes the focus (your composer is empty).
    let screen = await tmux.waitFor(/▶ ur-agent → user · ask {2}waiting for your answer/, 15_000, 'the question lane, focused');
    assert.match(screen, /│› Which colour should the note be\?/);
    assert.match(screen, /answer ur-agent… {2}\(Enter sends your answer\)/);
    assert.doesNotMatch(lineOf(screen, /ur-agent → user · ask/), /read-only/);

    tmux.type('teal, please');
    tmux.keys('Enter');
    screen = await tmux.waitFor(/You answered: teal, please/, 15_000, "ur-agent's echo of the answer in your lane");
    assert.match(lineOf(screen, /ur-agent → user · ask/), /ur-agent → user · ask {2}idle.*read-only/, 'the question lane is read-only again');
    assert.match(screen, /│teal, please/, 'the answer is in the question lane');
    await tmux.waitFor((s) => /user → ur-agent · default {2}idle/.test(s), 10_000, "ur-agent's turn to end");
    tmux.type('x');
    await tmux.waitFor(/read-only: no question of ur-agent is waiting for your answer here/, 5_000, 'typing refused');

    // Tokens of both model calls (1200+34, 1300+16), and the same after a restart.
    // The status bar counts a call's tokens when its usage arrives: wait for the second's.
    screen = await tmux.waitFor((s) => /^2\.5k tok/.test(tokensOf(s)), 10_000, 'the tokens of both calls');
    const before = tokensOf(screen);
    tmux.keys('C-c');
    tmux.keys('C-c');
    await tmux.waitFor(() => tmux.dead(), 10_000, 'the app to exit');
    tmux.respawn(command);
    screen = await tmux.waitFor((s) => /\(resumed\)/.test(s) && /^legion · /m.test(s), 15_000, 'the resumed run');
    assert.equal(tokensOf(screen), before, screen);
    assert.match(lineOf(screen, /user → ur-agent · default/), /2\.5k tok/, "your lane's header keeps its tokens");
    tmux.keys('C-c');
    tmux.keys('C-c');
    await tmux.waitFor(() => tmux.dead(), 10_000, 'the app to exit');
  } finally {
    tmux.kill();
    await ws.cleanup();
  }
});
