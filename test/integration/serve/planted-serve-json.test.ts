import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, realpath, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { APP_DIR } from '../../helpers/app-harness';
import { pidIsAlive } from '../../../src/storage/lock-file';

/**
 * Issue #27 item 8: a planted `.legion/serve.json` (a checkout can carry one; anything running
 * as the user can write one) named a foreign socket, and `legion run` attached to it — the
 * foreign server then saw the user's messages and could answer as the core. The client now
 * checks the socket before it connects; `legion stop` checks it before it signals the pid.
 */
test('a planted serve.json naming a foreign socket: legion run (with and without --attach) and legion stop refuse it in one line; the foreign socket never sees a connection; the pid is not signalled', async () => {
  await withTempDir(async (raw) => {
    const dir = await realpath(raw);
    const ws = join(dir, 'ws');
    const home = join(dir, 'home');
    await mkdir(ws, { recursive: true });
    await mkdir(home, { recursive: true });
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), PATH: process.env.PATH ?? '/usr/bin:/bin' };
    assert.equal((await runCli(['init'], { cwd: ws, env, appDir: APP_DIR })).code, 0);

    // The foreign server: another directory (an attacker's), a socket that records who connects.
    const foreignDir = join(dir, 'attacker');
    await mkdir(foreignDir, { mode: 0o700 });
    const foreign = join(foreignDir, 'serve.sock');
    const seen: Socket[] = [];
    const server = createServer((socket) => { seen.push(socket); socket.on('error', () => undefined); });
    await new Promise<void>((resolve) => server.listen(foreign, resolve));
    // A live process of the user's, which a `legion stop` trusting the file would SIGTERM.
    const victim = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      await writeFile(join(ws, '.legion', 'serve.json'), JSON.stringify({
        pid: victim.pid, hostname: hostname(), socket: foreign, runId: 'run-planted', startedAt: new Date().toISOString(), version: 'x',
      }) + '\n', { mode: 0o600 });

      for (const argv of [['run', 'hello'], ['run', '--attach', 'hello'], ['stop']]) {
        const result = await runCli(argv, { cwd: ws, env, appDir: APP_DIR });
        assert.notEqual(result.code, 0, `${argv.join(' ')}: ${result.stdout}`);
        const lines = result.stderr.trim().split('\n');
        assert.equal(lines.length, 1, result.stderr);
        assert.match(lines[0]!, new RegExp(`^legion: refusing the server ${ws}/\\.legion/serve\\.json names: ${foreign} is not this workspace's socket \\(${ws}/\\.legion/serve\\.sock or …/legion-[0-9a-f]{16}\\.sock\\); if no Legion server runs here, remove ${ws}/\\.legion/serve\\.json$`));
      }
      assert.equal(seen.length, 0, 'nothing connected to the foreign socket');
      assert.ok(pidIsAlive(victim.pid!), 'legion stop did not signal the pid the planted file names');
      // --no-attach runs locally, without looking at serve.json at all.
      const local = await runCli(['run', '--no-attach', 'hello'], { cwd: ws, env, appDir: APP_DIR });
      assert.equal(local.code, 0, local.stderr);
      assert.equal(seen.length, 0);
    } finally {
      victim.kill('SIGKILL');
      for (const socket of seen) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
