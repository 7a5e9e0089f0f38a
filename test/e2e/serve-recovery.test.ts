import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CLI, grantTools, hasTmux, initWorkspace, legionTui, openApprovalQueue, quitTui, startTmux, withWorkspace, type Tmux } from './modals-support';
import { until } from '../helpers/processes';
import { connectServer } from '../../src/serve/connection';
import { readServerInfo } from '../../src/serve/discovery';
import { readRunSessions } from '../../src/session/session-files';
import { layoutFor } from '../../src/storage/layout';
import type { LegionEvent } from '../../src/events/types';

const skip = hasTmux() ? false : 'tmux is not installed';

/** About 8 s of streaming: a turn still running when the attached TUI quits. */
const SLOW_TEXT = 'streaming on after the front end quits. '.repeat(50);

/** ur-agent (given file_write for this test) writes r1 itself: the request waits for the user. */
const SCRIPT = `
version: 1
replies:
  - agent: ur-agent
    first: true
    text: "Writing r1."
    toolCalls:
      - { name: file_write, input: { path: r1.txt, content: "one\\n" } }
  - { agent: ur-agent, on: tool-error, repeat: true, text: "ur-agent saw an error" }
  - { agent: ur-agent, on: tool-result, repeat: true, text: "ur-agent wrote r1" }
  - { agent: ur-agent, on: message, when: "slowly", repeat: true, chunkSize: 5, delayMs: 20, text: "${SLOW_TEXT}" }
  - { agent: ur-agent, on: message, repeat: true, text: "ur-agent answers" }
`;

function startServe(dir: string, env: Record<string, string>): { child: ChildProcess; log(): string; exited: Promise<unknown> } {
  const child = spawn(process.execPath, [CLI, '--cwd', dir, 'serve'], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (d) => { log += d; });
  return { child, log: () => log, exited: new Promise((r) => child.once('exit', r)) };
}


test('the server SIGKILLed with an approval pending: the next `legion` recovers serve.json, socket and run lock, runs locally (status bar `local`), offers the approval again, the histories are valid; --attach then finds no server; --no-attach runs locally beside a live server; an attached TUI quitting mid-turn leaves the turn running to its end', { skip, timeout: 240_000 }, async () => {
  await withWorkspace(async (dir) => {
    await initWorkspace(dir, [], dir);
    await grantTools(dir, 'ur-agent', ['file_write']);
    const script = join(dir, 'script.yaml');
    await writeFile(script, SCRIPT);
    const { command, env } = legionTui(dir, script);
    const envAll = { ...env, HOME: dir };
    const legionDir = join(dir, '.legion');
    const servers: { child: ChildProcess }[] = [];
    const tuis: Tmux[] = [];
    try {
      const first = startServe(dir, envAll);
      servers.push(first);
      await until(() => /serving run/.test(first.log()), `the server: ${first.log()}`, 60_000);
      const info = readServerInfo(legionDir);
      assert.equal(info.kind, 'server');
      const { socket, runId } = info.kind === 'server' ? info.info : { socket: '', runId: '' };
      const events: LegionEvent[] = [];
      const c = await connectServer({ socket, onEvent: (e) => events.push(e) });
      const sent = (await c.request('send', { responderId: 'ur-agent', text: 'go' })) as { ok: boolean; sessionId: string };
      assert.equal(sent.ok, true);
      await until(() => events.some((e) => e.type === 'approval-request'), 'the approval request', 30_000);
      first.child.kill('SIGKILL');
      await first.exited;
      c.close();
      assert.ok(existsSync(join(legionDir, 'serve.json')) && existsSync(socket), 'the killed server left serve.json and its socket');
      assert.ok(existsSync(layoutFor(dir).runLock(runId)), 'and its run lock');

      // The next `legion`: no server to attach to; it cleans up and runs the same run here.
      const tui = startTmux(command, envAll);
      tuis.push(tui);
      const s = await tui.waitFor(/^legion · run \S+ \(resumed\) · local · .*1 approval pending/m, 60_000);
      assert.match(s, new RegExp(`^legion · run ${runId} \\(resumed\\) · local · `, 'm'));
      assert.ok(!existsSync(join(legionDir, 'serve.json')), 'the stale serve.json is removed');
      assert.ok(!existsSync(socket), 'the stale socket is removed');
      const queue = await openApprovalQueue(tui, /Approval queue · 1 waiting for you/);
      assert.match(queue, /file_write r1\.txt/);
      tui.type('y');
      await tui.waitGone(/Approval queue/);
      await tui.waitFor(/ur-agent wrote r1/, 30_000);
      assert.equal(await readFile(join(dir, 'r1.txt'), 'utf8'), 'one\n');
      await quitTui(tui, { exited: /\[exited 0\]/, timeoutMs: 30_000 });
      const read = await readRunSessions(layoutFor(dir), runId);
      assert.deepEqual([...read.issues, ...read.sessions.flatMap((x) => x.issues)], []);
      assert.ok(read.sessions.find((x) => x.id === sent.sessionId)?.messages.some((m) => m.role === 'user' && m.content.some((b) => b.type === 'tool_result')), 'the approved call has its result');

      // --attach requires a server.
      const attach = spawnSync(process.execPath, [CLI, '--cwd', dir, 'run', '--attach', 'hi'], { env: { PATH: process.env.PATH, ...envAll }, encoding: 'utf8', timeout: 60_000 });
      assert.equal(attach.status, 1);
      assert.equal(attach.stderr, 'legion: no Legion server runs for this workspace: start one with `legion serve --detach`\n');
      const attachTui = startTmux([...command, '--attach'], envAll);
      tuis.push(attachTui);
      await attachTui.waitFor(/legion: no Legion server runs for this workspace: start one with `legion serve --detach`\n\[exited 1\]/, 30_000);

      // --no-attach ignores a live server: a new run here, `local`, while the server goes on.
      const second = startServe(dir, envAll);
      servers.push(second);
      await until(() => /serving run/.test(second.log()), `the second server: ${second.log()}`, 60_000);
      const local = startTmux([...command, '--no-attach', '--new'], envAll);
      tuis.push(local);
      const l = await local.waitFor(/^legion · run \S+ · local · /m, 60_000);
      const localRun = /^legion · run (\S+) · local · /m.exec(l)![1]!;
      assert.notEqual(localRun, runId);
      assert.doesNotMatch(second.log(), /attached/, 'nothing attached to the server');
      await quitTui(local, { exited: /\[exited 0\]/, timeoutMs: 30_000 });
      assert.equal(second.child.exitCode, null, 'the server still runs');

      // An attached TUI quits while a turn streams: the turn goes on to its end on the server.
      const attached = startTmux(command, envAll);
      tuis.push(attached);
      await attached.waitFor(new RegExp(`^legion · run ${runId} \\(resumed\\) · attached · `, 'm'), 60_000);
      await attached.waitFor(/message ur-agent/);
      attached.type('please answer slowly');
      attached.keys('Enter');
      await attached.waitFor(/streaming on after the front end quits\. streaming on/, 30_000);
      await quitTui(attached, { exited: /\[exited 0\]/, timeoutMs: 30_000 });
      await until(() => /client \d+: detached/.test(second.log()), `the server to log the detach: ${second.log()}`, 30_000);
      const after = await connectServer({ socket, onEvent: () => undefined });
      assert.equal(await after.request('idle', { sessionId: sent.sessionId }), SLOW_TEXT, 'the turn finished whole after the TUI quit');
      after.close();
    } finally {
      for (const t of tuis) t.kill();
      for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGTERM');
      await Promise.all(servers.map((s) => (s.child.exitCode !== null || s.child.signalCode !== null ? undefined : new Promise((r) => s.child.once('exit', r)))));
    }
  });
});
