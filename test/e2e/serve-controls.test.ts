import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CLI, hasTmux, initWorkspace, legionTui, startTmux, withWorkspace, type Tmux } from './modals-support';
import { until } from '../helpers/processes';

const skip = hasTmux() ? false : 'tmux is not installed';

// A hostile model (or a tool's output) behind `legion serve`: its text and the name of the tool it
// calls carry OSC 2 (the terminal's title: visible to tmux as the pane title, the same path as
// OSC 52 to the clipboard). Neither the TUI attached to the server nor `legion run` attached to
// it may pass them to the terminal (src/terminal-text.ts).
const SCRIPT = `
version: 1
replies:
  - agent: ur-agent
    first: true
    text: "hello \\e]2;TEXT-TITLE\\a there \\u009d2;C1-TITLE\\u009c end"
    toolCalls:
      - { name: "file_read\\e]2;TOOL-TITLE\\a", input: { path: "a.txt" } }
  - { agent: ur-agent, on: tool-error, repeat: true, text: "after the tool \\e]2;ERROR-TITLE\\a done" }
  - { agent: ur-agent, on: tool-result, repeat: true, text: "after the tool \\e]2;ERROR-TITLE\\a done" }
  - { agent: ur-agent, on: message, repeat: true, text: "again \\e]2;RUN-TITLE\\a \\u009b2J done" }
`;

function paneTitle(t: Tmux): string {
  return spawnSync('tmux', ['-L', t.name, 'display-message', '-p', '-t', t.name, '#{pane_title}'], { encoding: 'utf8' }).stdout.trim();
}

test('legion serve: an attached TUI and an attached legion run print a hostile model\'s text and tool name without control sequences', { skip, timeout: 120_000 }, async () => {
  await withWorkspace(async (dir) => {
    await initWorkspace(dir, [], dir);
    await writeFile(join(dir, 'a.txt'), 'x\n');
    const script = join(dir, 'script.yaml');
    await writeFile(script, SCRIPT);
    const { command, env } = legionTui(dir, script);
    const server = spawn(process.execPath, [CLI, '--cwd', dir, 'serve'], { env: { PATH: process.env.PATH, HOME: dir, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    server.stderr!.on('data', (d) => { log += d; });
    let tui: Tmux | undefined;
    try {
      await until(() => /serving run/.test(log), `the server: ${log}`, 60_000);
      tui = startTmux(command, { ...env, HOME: dir });
      await tui.waitFor(/· attached ·/, 30_000);
      const before = paneTitle(tui);
      tui.type('go');
      tui.keys('Enter');
      await tui.waitFor(/after the tool/, 30_000);
      const screen = tui.screen();
      assert.match(screen, /hello 2;TEXT-TITLE there 2;C1-TITLE end/);
      assert.match(screen, /file_read2;TOOL-TITLE/);
      assert.equal(paneTitle(tui), before, 'the pane title is the one it had');

      const run = spawnSync(process.execPath, [CLI, '--cwd', dir, 'run', 'again'], { env: { PATH: process.env.PATH, HOME: dir, ...env }, encoding: 'utf8', timeout: 60_000 });
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, /again 2;RUN-TITLE 2J done/);
      assert.deepEqual([...(run.stdout + run.stderr).matchAll(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g)].map((m) => JSON.stringify(m[0])), []);
    } finally {
      tui?.kill();
      server.kill('SIGTERM');
      await until(() => server.exitCode !== null || server.signalCode !== null, 'the server to stop', 30_000).catch(() => server.kill('SIGKILL'));
    }
  });
});
