import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, hasTmux, initWorkspace, legionTui, startTmux, withWorkspace, type Tmux } from './modals-support';
import { until } from '../helpers/processes';
import { TWO_AGENTS } from './scripts';

const skip = hasTmux() ? false : 'tmux is not installed';

/** The node process a tmux pane runs (the pane's shell runs it as its child). */
function tuiPid(t: Tmux): number {
  const pane = spawnSync('tmux', ['-L', t.name, 'list-panes', '-t', t.name, '-F', '#{pane_pid}'], { encoding: 'utf8' }).stdout.trim();
  const child = spawnSync('pgrep', ['-P', pane, 'node'], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
  return Number(child);
}

test('attached TUIs: both see the queue, a decision in one disappears from the other; a SIGKILLed TUI does not matter; quitting leaves the agents working; re-attach shows everything', { skip, timeout: 180_000 }, async () => {
  await withWorkspace(async (dir) => {
    await initWorkspace(dir, [{ id: 'scribe', tools: ['file_write'] }, { id: 'scout', tools: ['file_write'] }], dir);
    const script = join(dir, 'script.yaml');
    await writeFile(script, TWO_AGENTS);
    const { command, env } = legionTui(dir, script);
    const server = spawn(process.execPath, [CLI, '--cwd', dir, 'serve'], { env: { PATH: process.env.PATH, HOME: dir, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    server.stderr!.on('data', (d) => { log += d; });
    const tuis: Tmux[] = [];
    try {
      await until(() => /serving run/.test(log), `the server: ${log}`, 60_000);
      const a = startTmux(command, { ...env, HOME: dir });
      tuis.push(a);
      let s = await a.waitFor(/^legion · run \S+ \(resumed\) · attached · /m, 30_000);
      assert.match(s, /attached to the Legion server \(pid \d+\)/);
      await a.waitFor(/message ur-agent/);
      a.type('go');
      a.keys('Enter');
      await a.waitFor(/Approval queue · 4 waiting for you/, 30_000);

      // A second TUI attaches while the requests wait: it sees the same queue.
      const b = startTmux(command, { ...env, HOME: dir });
      tuis.push(b);
      s = await b.waitFor(/4 approvals pending/, 30_000);
      assert.match(s, /· attached ·/);
      // A decision in A disappears from B.
      a.type('y');
      await a.waitFor(/3 waiting for you/);
      await b.waitFor(/3 approvals pending/);
      b.keys('C-y');
      await b.waitFor(/Approval queue · 3 waiting for you/);
      a.type('Y');
      await a.waitGone(/Approval queue/);
      await b.waitFor(/Approval queue · nothing waiting for you/, 30_000);
      b.keys('Escape');

      // A dies hard: the server does not care; B sees the work finish.
      const pidA = tuiPid(a);
      assert.ok(pidA > 0);
      process.kill(pidA, 'SIGKILL');
      await b.waitFor(/All delegates answered\./, 30_000);
      assert.equal(await readFile(join(dir, 'a1.txt'), 'utf8'), 'alpha one\n');
      assert.equal(await readFile(join(dir, 'b2.txt'), 'utf8'), 'bravo two\n');

      // B quits (Ctrl+C twice): the server goes on.
      b.keys('C-c');
      b.keys('C-c');
      await b.waitFor(/\[exited 0\]/, 30_000);
      assert.equal(server.exitCode, null, 'the server still runs');

      // A new TUI shows everything that happened.
      const c = startTmux(command, { ...env, HOME: dir });
      tuis.push(c);
      s = await c.waitFor(/All delegates answered\./, 30_000);
      assert.match(s, /· attached ·/);

      // --no-attach cannot take the run the server holds; --attach is what the others did.
      const local = spawnSync(process.execPath, [CLI, '--cwd', dir, 'run', '--no-attach', 'hello'], { env: { PATH: process.env.PATH, HOME: dir, ...env }, encoding: 'utf8' });
      assert.equal(local.status, 1);
      assert.match(local.stderr, /is in use by another Legion/);
    } finally {
      for (const t of tuis) t.kill();
      server.kill('SIGTERM');
      await new Promise((r) => server.once('exit', r));
      assert.ok(!existsSync(join(dir, '.legion', 'serve.json')));
    }
  });
});
