import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp';
import { hasTmux, shellCommand, startTmux } from '../helpers/tmux';

/**
 * The e2e tests' terminal driver (test/helpers/tmux.ts) against programs that make its races
 * certain rather than rare: an app that draws before it reads its terminal, a screen drawn in
 * two writes, a process that outlives its pane's hangup.
 */
const skip = !hasTmux() && 'tmux is not installed';

/** Draws `ready`, switches to raw mode 500 ms later, then writes every chunk it reads to `out` (JSON lines). */
const LATE_READER = `
process.stdout.write('ready\\n');
setTimeout(() => {
  process.stdin.setRawMode(true);
  process.stdin.on('data', (d) => {
    require('node:fs').appendFileSync(process.argv[1], JSON.stringify(d.toString()) + '\\n');
    if (d.includes('\\x03')) process.exit(0);
  });
}, 500);
`;

test('the first key waits until the app reads its terminal: typed before its raw mode, Enter would arrive as a line feed, echoed', { skip, timeout: 60_000 }, async () => {
  const ws = await makeTempDir('legion-tmux-gate-');
  const out = join(ws.dir, 'read.jsonl');
  const tmux = startTmux({ command: shellCommand([process.execPath, '-e', LATE_READER, out]), cwd: ws.dir, env: process.env });
  try {
    await tmux.waitFor(/ready/, 15_000, 'the first frame');
    tmux.type('go');
    tmux.keys('Enter');
    await tmux.waitFor(() => existsSync(out) && readFileSync(out, 'utf8').includes('\\r'), 15_000, 'the keys read');
    const read = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string).join('');
    assert.equal(read, 'go\r', 'the keys as typed, in raw mode');
    assert.doesNotMatch(tmux.capture(), /go/, 'nothing echoed by a terminal still in canonical mode');
    tmux.keys('C-c');
    await tmux.waitFor(() => tmux.dead(), 15_000, 'the app to exit');
  } finally {
    tmux.kill();
    await ws.cleanup();
  }
});

test('waitFor returns the frame once it settles: a match in the first of two writes comes back with the second', { skip, timeout: 60_000 }, async () => {
  const ws = await makeTempDir('legion-tmux-settle-');
  const tmux = startTmux({ command: shellCommand([process.execPath, '-e', "process.stdout.write('head\\n'); setTimeout(() => process.stdout.write('tail\\n'), 25); setTimeout(() => {}, 60_000);"]), cwd: ws.dir, env: process.env });
  try {
    const screen = await tmux.waitFor(/head/, 15_000, 'the first write');
    assert.match(screen, /head\ntail/);
  } finally {
    tmux.kill();
    await ws.cleanup();
  }
});

test('kill returns once every process of the pane is gone, also one that ignores the hangup: nothing writes into a workspace being removed', { skip, timeout: 60_000 }, async () => {
  const ws = await makeTempDir('legion-tmux-kill-');
  const late = join(ws.dir, 'late.txt');
  writeFileSync(join(ws.dir, 'child.sh'), `trap '' HUP\nsleep 1\necho late > '${late}'\n`);
  // The pane's shell dies of the hangup; its child ignores it and writes a second later.
  const tmux = startTmux({ command: `sh -c 'sh ./child.sh & echo started; wait'`, cwd: ws.dir, env: process.env });
  try {
    await tmux.waitFor(/started/, 15_000, 'the child started');
  } finally {
    tmux.kill();
  }
  assert.equal(readFileSync(late, 'utf8'), 'late\n', 'kill returned before the pane\'s child ended');
  await ws.cleanup();
});
