import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { bundlePath, ensureBundle } from '../helpers/bundle';
import { withTempDir } from '../helpers/tmp';
import { processGone, until } from '../helpers/processes';
import { setupServeWorkspace, TRICKLE_TEXT } from '../helpers/serve-workspace';
import { connectServer } from '../../src/serve/connection';
import { readServerInfo } from '../../src/serve/discovery';
import { readRunSessions } from '../../src/session/session-files';
import { layoutFor } from '../../src/storage/layout';
import type { LegionEvent } from '../../src/events/types';

ensureBundle({ e2e: true });

function startServe(dir: string, env: Record<string, string>): { child: ChildProcess; stderr(): string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [bundlePath, 'serve'], { cwd: dir, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (d) => { err += d; });
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, stderr: () => err, exited };
}

function cli(dir: string, env: Record<string, string>, args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [bundlePath, ...args], { cwd: dir, env: { PATH: process.env.PATH, ...env }, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The CLI without blocking this process (an attached client here must keep reading meanwhile). */
function cliAsync(dir: string, env: Record<string, string>, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [bundlePath, ...args], { cwd: dir, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => { stdout += d; });
  child.stderr!.on('data', (d) => { stderr += d; });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

test('legion serve: one per workspace; SIGKILLed, the next one recovers lock and socket and re-offers the pending approval; legion stop is graceful', { timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    const env = await setupServeWorkspace(dir);
    const legionDir = join(dir, '.legion');
    const first = startServe(dir, env);
    let detachedPid = 0;
    try {
      await until(() => /serving run/.test(first.stderr()), `the server to start: ${first.stderr()}`, 60_000);
      const info = readServerInfo(legionDir);
      assert.equal(info.kind, 'server');
      const socket = info.kind === 'server' ? info.info.socket : '';

      const second = cli(dir, env, ['serve']);
      assert.equal(second.code, 1);
      assert.match(second.stderr, new RegExp(`^legion: a Legion server already runs for this workspace \\(pid ${first.child.pid}, run [^,]+, socket ${socket.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\): attach with \`legion\`, stop it with \`legion stop\`\\n$`));

      // `legion runs` and `legion show` read the files: they work while the server holds the run.
      const runs = cli(dir, env, ['runs']);
      assert.equal(runs.code, 0, runs.stderr);
      assert.match(runs.stdout, new RegExp(info.kind === 'server' ? info.info.runId : 'none'));
      const shown = cli(dir, env, ['show']);
      assert.equal(shown.code, 0, shown.stderr);

      const events: LegionEvent[] = [];
      const c = await connectServer({ socket, onEvent: (e) => events.push(e) });
      const sent = (await c.request('send', { responderId: 'worker', text: 'write the file' })) as { sessionId: string };
      await until(() => events.some((e) => e.type === 'approval-request'), 'the approval request');
      first.child.kill('SIGKILL');
      await first.exited;
      c.close();
      assert.ok(existsSync(join(legionDir, 'serve.json')), 'a SIGKILLed server leaves serve.json behind');
      const runId = info.kind === 'server' ? info.info.runId : '';
      // The histories the killed server wrote are valid: the request's tool call is on disk, no torn line.
      const killed = await readRunSessions(layoutFor(dir), runId);
      assert.deepEqual([...killed.issues, ...killed.sessions.flatMap((x) => x.issues)], []);
      const asked = killed.sessions.find((x) => x.id === sent.sessionId);
      assert.ok(asked?.messages.some((m) => m.role === 'assistant' && m.content.some((b) => b.type === 'tool_use' && b.name === 'file_write')), 'the tool call waiting for approval is on disk');

      const again = startServe(dir, env);
      try {
        await until(() => /serving run/.test(again.stderr()), `the second server to start: ${again.stderr()}`, 60_000);
        assert.match(again.stderr(), /is gone: removed its stale/);
        assert.match(again.stderr(), /took over the lock of run/);
        const c2 = await connectServer({ socket, onEvent: () => undefined });
        const pending = (await c2.request('pendingApprovals', {})) as { toolName: string; sessionId: string; requestId: string }[];
        assert.equal(pending.length, 1, 'the pending approval is offered again');
        assert.equal(pending[0]!.sessionId, sent.sessionId);
        assert.deepEqual(await c2.request('resolveApprovals', { requestIds: [pending[0]!.requestId], decision: 'approved' }), { ok: true });
        assert.equal(await c2.request('idle', { sessionId: sent.sessionId }), 'wrote it');
        assert.equal(readFileSync(join(dir, 'out.txt'), 'utf8'), 'hello');
        // A long turn is streaming when `legion stop` comes: it is interrupted, its history stays valid.
        const streamed: LegionEvent[] = [];
        let bye: { reason: string; bye: boolean } | undefined;
        const c3 = await connectServer({ socket, onEvent: (e) => streamed.push(e), onClose: (reason, how) => { bye = { reason, bye: how === 'bye' }; } });
        const long = (await c3.request('send', { responderId: 'worker', text: 'trickle', name: 'long' })) as { sessionId: string };
        await until(() => streamed.filter((e) => e.type === 'text-delta' && e.sessionId === long.sessionId).length >= 5, 'the long turn to stream');
        c2.close();
        const stopped = await cliAsync(dir, env, ['stop']);
        assert.equal(stopped.code, 0, stopped.stderr);
        assert.match(stopped.stdout, new RegExp(`^legion: stopped the server \\(pid ${again.child.pid}, run `));
        assert.equal(await again.exited, 0);
        await until(() => bye !== undefined, 'the goodbye');
        assert.deepEqual(bye, { reason: 'the Legion server is stopping', bye: true });
        assert.ok(!existsSync(join(legionDir, 'serve.json')));
        assert.ok(!existsSync(socket));
        assert.ok(!existsSync(layoutFor(dir).runLock(runId)), 'the run lock is released');
        const read = await readRunSessions(layoutFor(dir), runId);
        assert.deepEqual([...read.issues, ...read.sessions.flatMap((x) => x.issues)], []);
        const interrupted = read.sessions.find((x) => x.id === long.sessionId);
        assert.ok(interrupted, 'the interrupted session is on disk');
        const last = interrupted.messages[interrupted.messages.length - 1]!;
        const partial = last.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
        assert.equal(last.role, 'assistant', 'the streamed part of the answer was kept');
        assert.ok(partial.length > 0 && partial.length < TRICKLE_TEXT.length, `interrupted mid-stream (${partial.length} of ${TRICKLE_TEXT.length} characters)`);
        assert.ok(TRICKLE_TEXT.startsWith(partial));
        assert.equal(cli(dir, env, ['stop']).stderr, 'legion: no Legion server runs for this workspace\n');

        // --detach: the server goes on in a session of its own (no terminal), its log in .legion/logs/serve.log.
        const detached = await cliAsync(dir, env, ['serve', '--detach']);
        assert.equal(detached.code, 0, detached.stderr);
        const logFile = join(legionDir, 'logs', 'serve.log');
        const m = new RegExp(`^legion: serving run ${runId} \\(pid (\\d+)\\); log: ${escape(logFile)}; stop with \`legion stop\`\n$`).exec(detached.stdout);
        assert.ok(m, detached.stdout);
        detachedPid = Number(m[1]);
        assert.equal(spawnSync('ps', ['-o', 'sid=', '-p', String(detachedPid)], { encoding: 'utf8' }).stdout.trim(), String(detachedPid), 'the leader of its own session');
        assert.equal(statSync(logFile).mode & 0o777, 0o600);
        // --detach returns once the socket answers; the server logs "serving" after its add-ons
        // started, a moment later (a loaded machine: after the check, CI 05:25).
        const serving = new RegExp(`legion serve: serving run ${runId} of .* \\(pid ${detachedPid}\\)`);
        await until(() => serving.test(readFileSync(logFile, 'utf8')), 'the detached server to log that it serves');
        const c4 = await connectServer({ socket, onEvent: () => undefined });
        assert.equal(c4.welcome.pid, detachedPid);
        c4.close();
        const stopped2 = await cliAsync(dir, env, ['stop']);
        assert.equal(stopped2.code, 0, stopped2.stderr);
        await until(() => processGone(detachedPid), 'the detached server to exit');
        assert.match(readFileSync(logFile, 'utf8'), /legion serve: stopping: legion stop \(SIGTERM\)\n[\s\S]*legion serve: stopped\n$/);
        assert.ok(!existsSync(join(legionDir, 'serve.json')));
      } finally {
        again.child.kill('SIGKILL');
        if (detachedPid > 0 && !processGone(detachedPid)) process.kill(detachedPid, 'SIGKILL');
      }
    } finally {
      first.child.kill('SIGKILL');
    }
  });
});
