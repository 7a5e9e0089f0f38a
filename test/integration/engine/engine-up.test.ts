import '../../helpers/own-home';
import { test } from 'node:test';
import { testUserDir } from '../../helpers/trust';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { initWorkspace } from '../../../src/collective/init';
import { restateServerBinary } from '../../../src/engine/local-engine';
import { readLocalEngine, writeLocalEngine, type LocalEngineRecord } from '../../../src/engine/local-record';
import { OLD_LOCAL_ENGINE } from '../../../src/cli/engine-settings';
import { until } from '../../helpers/processes';
import { pidIsAlive } from '../../../src/storage/lock-file';
import { withTempDir } from '../../helpers/tmp';
import { checkWorkspaceTrust } from '../../../src/storage/workspace-trust';
import { APP_DIR } from '../../helpers/crash-workspace';
import { REPO_ROOT } from '../../helpers/bundle';

const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

/** `legion engine up` in `dir`, which must succeed and leave its record. */
async function engineUp(dir: string): Promise<{ up: Awaited<ReturnType<typeof legion>>; record: LocalEngineRecord }> {
  const up = await legion(dir, ['engine', 'up']);
  assert.equal(up.code, 0, up.stderr);
  const record = readLocalEngine(join(dir, '.legion'));
  assert.ok(record);
  return { up, record };
}

function legion(dir: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'bin', 'legion.ts'), '--cwd', dir, ...args], {
      cwd: REPO_ROOT, env: { HOME: dir, PATH: process.env.PATH ?? '/usr/bin:/bin', LEGION_PROVIDER: 'faux' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('legion engine up starts restate-server and a worker, says what runs where; doctor checks them; legion run answers through them; down stops both', { skip, timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    await initWorkspace({ appDir: APP_DIR, workspaceRoot: dir, userDir: testUserDir(dir) });
    await writeFile(join(dir, '.legion', 'config.yaml'), 'engine: { kind: restate }\n');
    // Before: the engine is configured but does not run.
    const before = await legion(dir, ['doctor']);
    assert.match(before.stdout, /✗ .*no engine runs for this workspace/);
    const worker = await legion(dir, ['worker']);
    assert.equal(worker.code, 1);
    assert.match(worker.stderr, /^legion: engine\.kind is restate but no engine runs for this workspace: start one with legion engine up/);
    let pids: number[] = [];
    try {
      const { up, record } = await engineUp(dir);
      pids = [record.serverPid, record.workerPid];
      assert.ok(pids.every(pidIsAlive));
      assert.ok(up.stdout.includes(`ingress ${record.ingress}, admin ${record.admin}`), up.stdout);
      assert.ok(up.stdout.includes(`worker (legion worker, pid ${record.workerPid}): ${record.worker}`), up.stdout);
      assert.match(up.stdout, /logs: .*engine\.log, .*worker\.log/);
      const doctor = await legion(dir, ['doctor', '--json']);
      const engineCheck = (JSON.parse(doctor.stdout) as { checks: { name: string; ok: boolean; detail: string }[] }).checks.find((c) => c.name === 'engine');
      assert.ok(engineCheck?.ok, JSON.stringify(engineCheck));
      assert.ok(engineCheck.detail.includes(record.worker));
      // A new user's first message goes through the engine: the worker of engine up answers it.
      const first = await legion(dir, ['run', 'hello']);
      assert.equal(first.code, 0, first.stderr);
      assert.ok(first.stdout.trim().length > 0, 'no answer printed');
      assert.ok(readdirSync(join(dir, '.legion', 'runs')).length === 1);
      const again = await legion(dir, ['engine', 'up']);
      assert.equal(again.code, 0);
      assert.match(again.stdout, /^the local engine already runs/);
      const down = await legion(dir, ['engine', 'down']);
      assert.equal(down.code, 0, down.stderr);
      assert.ok(pids.every((pid) => !pidIsAlive(pid)), 'a process of the engine still runs');
      assert.equal(readLocalEngine(join(dir, '.legion')), null);
      // Up again: the same URLs (turns pinned to the worker's URL find it again).
      const back = await legion(dir, ['engine', 'up']);
      assert.equal(back.code, 0, back.stderr);
      const again2 = readLocalEngine(join(dir, '.legion'));
      assert.ok(again2);
      pids = [again2.serverPid, again2.workerPid];
      assert.deepEqual([again2.ingress, again2.admin, again2.worker], [record.ingress, record.admin, record.worker]);
      assert.equal((await legion(dir, ['engine', 'down'])).code, 0);
    } finally {
      for (const pid of pids) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    }
  });
});

test('legion engine up in a folder without .legion/ makes it trusted (Legion made it for the user), so its worker honours the workspace', { skip, timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    let pids: number[] = [];
    try {
      const { record } = await engineUp(dir);
      pids = [record.serverPid, record.workerPid];
      const trust = await checkWorkspaceTrust({ workspaceRoot: dir, userDir: testUserDir(dir) });
      assert.equal(trust.trusted, true, JSON.stringify(trust));
      assert.equal((await legion(dir, ['engine', 'down'])).code, 0);
    } finally {
      for (const pid of pids) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    }
  });
});

test('a local engine an older Legion started (loopback TCP, no request identity) is refused until restarted; legion engine up restarts it protected', { skip, timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    await initWorkspace({ appDir: APP_DIR, workspaceRoot: dir, userDir: testUserDir(dir) });
    await writeFile(join(dir, '.legion', 'config.yaml'), 'engine: { kind: restate }\n');
    // Stand-ins for the old engine (a process group, as engine up starts it) and its worker.
    const oldServer = spawn('sleep', ['120'], { detached: true, stdio: 'ignore' });
    const oldWorker = spawn('sleep', ['120'], { stdio: 'ignore' });
    let pids: number[] = [oldServer.pid!, oldWorker.pid!];
    try {
      writeLocalEngine(join(dir, '.legion'), { serverPid: oldServer.pid!, workerPid: oldWorker.pid!, ingress: 'http://127.0.0.1:8080', admin: 'http://127.0.0.1:9070', worker: 'http://127.0.0.1:9080', startedAt: new Date().toISOString() });
      const worker = await legion(dir, ['worker']);
      assert.equal(worker.code, 1);
      assert.equal(worker.stderr, `legion: ${OLD_LOCAL_ENGINE}\n`);
      const { up, record } = await engineUp(dir);
      pids = [...pids, record.serverPid, record.workerPid];
      assert.match(up.stdout, /^restarting the local engine: an older Legion started it on loopback TCP/);
      await until(() => !pidIsAlive(oldServer.pid!) && !pidIsAlive(oldWorker.pid!), 'the old engine and worker stopped');
      assert.ok(record.identityKey && record.ingress.startsWith('http+unix://') && record.admin.startsWith('http+unix://'), JSON.stringify(record));
      assert.equal(statSync(join(dir, '.legion', 'engine', 'data')).mode & 0o777, 0o700);
      assert.equal(statSync(join(dir, '.legion', 'engine', 'data', 'request-identity.pem')).mode & 0o777, 0o600);
      assert.equal((await legion(dir, ['engine', 'down'])).code, 0);
    } finally {
      for (const pid of pids) try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
    }
  });
});

test('a signing key planted as a link to a key others can read: legion engine up refuses it in one line and starts nothing', { skip, timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    await initWorkspace({ appDir: APP_DIR, workspaceRoot: dir, userDir: testUserDir(dir) });
    await writeFile(join(dir, '.legion', 'config.yaml'), 'engine: { kind: restate }\n');
    // The attacker's key, readable by everyone, and the engine's key file a link to it.
    const { generateKeyPairSync } = await import('node:crypto');
    const { mkdirSync, symlinkSync, writeFileSync, chmodSync } = await import('node:fs');
    const planted = join(dir, 'attacker.pem');
    writeFileSync(planted, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }));
    chmodSync(planted, 0o644);
    mkdirSync(join(dir, '.legion', 'engine', 'data'), { recursive: true, mode: 0o700 });
    symlinkSync(planted, join(dir, '.legion', 'engine', 'data', 'request-identity.pem'));
    const up = await legion(dir, ['engine', 'up']);
    const started = readLocalEngine(join(dir, '.legion'));
    if (started) for (const pid of [started.serverPid, started.workerPid]) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } }
    assert.notEqual(up.code, 0, up.stdout);
    assert.match(up.stderr, /request-identity\.pem is not a regular file \(a symbolic link\).*remove it to make a new one/);
    assert.equal(started, null, 'an engine started with the planted key');
  });
});
