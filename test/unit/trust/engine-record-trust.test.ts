import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { APP_DIR } from '../../helpers/app-harness';
import { pidIsAlive } from '../../../src/storage/lock-file';

/**
 * A cloned repository commits `.legion/engine/engine.json` naming processes of the victim (or
 * serverPid 1: `kill(-1)` signals every process the user owns). In the untrusted clone,
 * `legion engine down` and `up` must not believe it (docs/workspace-trust.md: engine.json ignored):
 * nothing is signalled, the record stays, and the command says to trust first.
 */
const cli = (dir: string, argv: string[]) => runCli(['--cwd', dir, ...argv], { cwd: dir, appDir: APP_DIR, env: { HOME: dir } });

function victim(): ChildProcess {
  // Its own process group, as restate-server's would be: the record's serverPid is signalled as a group.
  return spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { detached: true, stdio: 'ignore' });
}

for (const action of ['down', 'up'] as const) {
  test(`legion engine ${action} in an untrusted workspace signals no process a committed engine.json names`, async () => {
    await withTempDir(async (dir) => {
      const server = victim();
      const worker = victim();
      try {
        const record = join(dir, '.legion', 'engine', 'engine.json');
        await mkdir(join(dir, '.legion', 'engine'), { recursive: true });
        // up stops a half-dead record's live half: the worker is given as dead.
        const workerPid = action === 'up' ? 2 ** 22 + 17 : worker.pid!;
        await writeFile(record, JSON.stringify({ serverPid: server.pid, workerPid, ingress: 'http://127.0.0.1:1', admin: 'http://127.0.0.1:2', worker: 'http://127.0.0.1:3', startedAt: new Date().toISOString() }));
        const r = await cli(dir, ['engine', action]);
        assert.notEqual(r.code, 0);
        assert.match(r.stderr, /not trusted.*legion trust/);
        await new Promise((resolve) => setTimeout(resolve, 200));
        assert.ok(pidIsAlive(server.pid!), 'the process named as the engine is alive');
        assert.ok(pidIsAlive(worker.pid!), 'the process named as the worker is alive');
        assert.ok(existsSync(record), 'the record is left as it is');
      } finally {
        for (const child of [server, worker]) { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ } }
      }
    });
  });
}
