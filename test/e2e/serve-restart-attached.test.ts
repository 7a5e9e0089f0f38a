import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { restateServerBinary } from '../../src/engine/local-engine';
import { until } from '../helpers/processes';
import { ensureBundle } from '../helpers/bundle';
import { BUILT, killHard, projectionLines, startEngineStack } from '../helpers/engine-fixture';
import { CLI, hasTmux, initWorkspace, legionTui, openApprovalQueue, quitTui, startTmux, withWorkspace, type Tmux } from './modals-support';

const skip = hasTmux() ? false : 'tmux is not installed';
const skipEngine = skip || (restateServerBinary().ok ? false : 'restate-server is not installed for this platform');

const SCRIPT = `
version: 1
replies:
  - { agent: ur-agent, on: message, when: "after", repeat: true, text: "ur-agent answers after the restart" }
  - { agent: ur-agent, on: message, repeat: true, text: "ur-agent answers before" }
`;

/** `legion serve` (the built CLI) in the foreground, its log kept. */
function startServe(dir: string, env: Record<string, string>): { child: ChildProcess; log(): string } {
  const child = spawn(process.execPath, [CLI, '--cwd', dir, 'serve'], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (d) => { log += d; });
  return { child, log: () => log };
}

const RECONNECTING = /the connection to the Legion server was lost \(.*\): reconnecting… \(attempt \d+, Ctrl\+C to quit\)/;

test('a TUI attached to `legion serve` outlives the server\'s SIGKILL and a restart 6 s later: it shows reconnecting meanwhile, keeps a message typed then (refused, still in the composer), comes back by itself (same run, rebuilt) and the message sent after is answered', { skip, timeout: 240_000 }, async () => {
  await withWorkspace(async (dir) => {
    await initWorkspace(dir, [], dir);
    const script = join(dir, 'script.yaml');
    await writeFile(script, SCRIPT);
    const { command, env } = legionTui(dir, script);
    const envAll = { ...env, HOME: dir };
    const servers: ChildProcess[] = [];
    let tui: Tmux | undefined;
    try {
      const first = startServe(dir, envAll);
      servers.push(first.child);
      await until(() => /serving run/.test(first.log()), `the server: ${first.log()}`, 60_000);
      tui = startTmux(command, envAll);
      const s = await tui.waitFor(/^legion · run \S+ \(resumed\) · attached · /m, 60_000);
      const runId = /^legion · run (\S+) /m.exec(s)![1]!;
      await tui.waitFor(/message ur-agent/);
      tui.type('hello');
      tui.keys('Enter');
      await tui.waitFor(/ur-agent answers before/, 30_000);

      await killHard(first.child);
      await tui.waitFor(RECONNECTING, 10_000);
      await tui.waitFor(/^legion · run \S+ \(resumed\) · reconnecting · /m);
      // Typed while the server is down: refused, and the text stays in the composer.
      tui.type('ask after the restart');
      tui.keys('Enter');
      await tui.waitFor(/not connected to the Legion server \(reconnecting\): nothing was sent/);
      assert.match(tui.screen(), /› ask after the restart/);
      tui.keys('End'); // the next key clears the refusal: the reconnecting line is back under it
      await tui.waitFor(RECONNECTING);
      await sleep(6000);
      const down = tui.screen();
      assert.match(down, RECONNECTING, 'still trying after 6 s');
      assert.doesNotMatch(down, /went away|quit and start/);
      const attempt = Number(/attempt (\d+)/.exec(down)![1]);
      assert.ok(attempt >= 5, `attempt ${attempt}`);

      const second = startServe(dir, envAll);
      servers.push(second.child);
      await until(() => /serving run/.test(second.log()), `the second server: ${second.log()}`, 60_000);
      await tui.waitFor(/is back \(pid \d+, restarted\): everything was rebuilt from its snapshot/, 30_000);
      await tui.waitFor(new RegExp(`^legion · run ${runId} \\(resumed\\) · attached · `, 'm'));
      assert.match(tui.screen(), /ur-agent answers before/, 'the same run: the answer from before the restart');
      assert.match(tui.screen(), /› ask after the restart/, 'the draft kept through the reconnection');
      tui.keys('Enter');
      await tui.waitFor(/ur-agent answers after the restart/, 30_000);
      await until(() => /attached \(tui, since \d+: snapshot\)/.test(second.log()), `the server logs the reconnection: ${second.log()}`, 10_000);
      await quitTui(tui, { exited: /\[exited 0\]/, timeoutMs: 30_000 });
    } finally {
      tui?.kill();
      for (const child of servers) await killHard(child);
    }
  });
});

test('engine mode: a TUI attached through `legion serve`\'s SIGKILL and restart (turns and the approval stay on the worker) reconnects by itself and decides the pending approval', { skip: skipEngine, timeout: 300_000 }, async () => {
  ensureBundle({ e2e: true });
  await withWorkspace(async (dir) => {
    const stack = await startEngineStack(dir, { answerChunks: 3, delayMs: 10, toolDecision: 'ask', entry: BUILT });
    let tui: Tmux | undefined;
    try {
      tui = startTmux([process.execPath, CLI, '--cwd', dir], { ...stack.env, TERM: 'xterm-256color', NO_COLOR: '1' });
      await tui.waitFor(/· attached ·/, 60_000);
      await tui.waitFor(/message ur-agent/);
      const sender = await stack.attach('sender');
      assert.ok(sender.send('builder', 'build it').ok);
      await until(() => sender.pendingApprovals().length === 1, 'the request raised on the worker', 60_000, 20);
      await tui.waitFor(/1 approval pending/, 30_000);
      await killHard(stack.serve);
      await tui.waitFor(RECONNECTING, 10_000);
      await sleep(5000);
      assert.match(tui.screen(), RECONNECTING);
      await stack.restartServe();
      await tui.waitFor(/is back \(pid \d+, restarted\)/, 30_000);
      await tui.waitFor(/· attached ·/);
      const queue = await openApprovalQueue(tui, /Approval queue · 1 waiting for you/);
      assert.match(queue, /sh tool\.sh/);
      tui.type('y');
      await tui.waitGone(/Approval queue/, 30_000);
      await until(() => projectionLines(dir).length === 4, 'the turn ended on the worker', 60_000, 50);
      assert.equal(readFileSync(join(dir, 'starts.txt'), 'utf8'), 'started\n', 'the tool ran other than once');
      assert.ok(existsSync(join(dir, 'starts.txt')));
      await quitTui(tui);
    } finally {
      tui?.kill();
      await stack.close();
    }
  });
});
