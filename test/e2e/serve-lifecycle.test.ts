import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { bundlePath, ensureBundle } from '../helpers/bundle';
import { withTempDir } from '../helpers/tmp';
import { until } from '../helpers/processes';
import { setupServeWorkspace } from '../helpers/serve-workspace';
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

test('legion serve: one per workspace; SIGKILLed, the next one recovers lock and socket and re-offers the pending approval; legion stop is graceful', { timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    const env = await setupServeWorkspace(dir);
    const legionDir = join(dir, '.legion');
    const first = startServe(dir, env);
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
        // A long turn is running when `legion stop` comes: it is interrupted, the history stays valid.
        await c2.request('send', { responderId: 'worker', text: 'flood', name: 'long' });
        const stopped = cli(dir, env, ['stop']);
        assert.equal(stopped.code, 0, stopped.stderr);
        assert.match(stopped.stdout, new RegExp(`^legion: stopped the server \\(pid ${again.child.pid}, run `));
        assert.equal(await again.exited, 0);
        assert.ok(!existsSync(join(legionDir, 'serve.json')));
        assert.ok(!existsSync(socket));
        const runId = info.kind === 'server' ? info.info.runId : '';
        assert.ok(!existsSync(layoutFor(dir).runLock(runId)), 'the run lock is released');
        const read = await readRunSessions(layoutFor(dir), runId);
        assert.deepEqual(read.issues ?? [], []);
        assert.ok(read.sessions.length >= 1);
        assert.equal(cli(dir, env, ['stop']).stderr, 'legion: no Legion server runs for this workspace\n');
      } finally {
        again.child.kill('SIGKILL');
      }
    } finally {
      first.child.kill('SIGKILL');
    }
  });
});
