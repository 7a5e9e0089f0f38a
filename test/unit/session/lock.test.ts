import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { layoutFor, type Layout } from '../../../src/storage/layout';
import { acquireRunLock, releaseOnExit } from '../../../src/session/lock';
import { pidIsAlive } from '../../../src/storage/lock-file';
import { withTempDir } from '../../helpers/tmp';
import { T0 } from './helpers';

const RUN = '2026-11-21T19-30-00-abc123';
const host = hostname();

async function runDir(dir: string): Promise<Layout> {
  const layout = layoutFor(dir);
  await mkdir(layout.runDir(RUN), { recursive: true });
  return layout;
}

function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  assert.equal(child.status, 0);
  assert.equal(pidIsAlive(child.pid!), false);
  return child.pid!;
}

test('acquire writes {pid, hostname, startedAt}; a second acquire while the holder lives is refused with what to do', async () => {
  await withTempDir(async (dir) => {
    const layout = await runDir(dir);
    const first = acquireRunLock(layout, RUN, { pid: process.pid, hostname: host, now: T0 });
    assert.ok(first.ok);
    assert.equal(first.recovered, undefined);
    const content = JSON.parse(await readFile(layout.runLock(RUN), 'utf8'));
    assert.equal(content.pid, process.pid);
    assert.equal(content.hostname, host);
    assert.equal(content.startedAt, T0.toISOString());
    const second = acquireRunLock(layout, RUN, { pid: 99999999, hostname: host, now: new Date() });
    assert.deepEqual(second, {
      ok: false,
      error: `run ${RUN} is in use by another Legion (pid ${process.pid}, since 2026-11-21 19:30:00 UTC): open it read-only with \`legion show\`, or start a new run with --new`,
    });
    assert.deepEqual(readdirSync(layout.runDir(RUN)), ['lock'], 'no temp files left behind');
    first.lock.release();
    assert.equal(existsSync(layout.runLock(RUN)), false);
    const third = acquireRunLock(layout, RUN, { pid: process.pid, hostname: host, now: T0 });
    assert.ok(third.ok);
    assert.equal(third.recovered, undefined);
    third.lock.release();
  });
});

test('a lock held on another host is refused (liveness cannot be checked) and names the file to delete', async () => {
  await withTempDir(async (dir) => {
    const layout = await runDir(dir);
    await writeFile(layout.runLock(RUN), JSON.stringify({ pid: 4242, hostname: 'elsewhere', startedAt: T0.toISOString() }));
    const result = acquireRunLock(layout, RUN, { pid: process.pid, hostname: host, now: T0, isAlive: () => false });
    assert.equal(result.ok, false);
    assert.match(!result.ok ? result.error : '', /pid 4242 on host elsewhere, since 2026-11-21 19:30:00 UTC.*if that Legion is gone, delete .*lock$/);
  });
});

test('a stale lock (dead pid) is taken over and reported as recovered', async () => {
  await withTempDir(async (dir) => {
    const layout = await runDir(dir);
    const pid = deadPid();
    await writeFile(layout.runLock(RUN), JSON.stringify({ pid, hostname: host, startedAt: '2026-11-20T08:00:00.000Z' }) + '\n');
    const result = acquireRunLock(layout, RUN, { pid: process.pid, hostname: host, now: T0 });
    assert.ok(result.ok);
    assert.equal(result.recovered, true);
    assert.deepEqual(result.previous, { pid, hostname: host, startedAt: '2026-11-20T08:00:00.000Z' });
    assert.equal(JSON.parse(await readFile(layout.runLock(RUN), 'utf8')).pid, process.pid);
    assert.deepEqual(readdirSync(layout.runDir(RUN)), ['lock']);
    result.lock.release();
    assert.equal(existsSync(layout.runLock(RUN)), false);
  });
});

test('a garbage or empty lock file is stale', async () => {
  await withTempDir(async (dir) => {
    const layout = await runDir(dir);
    for (const garbage of ['', '{"pid":', '[]', '{"pid":"12","hostname":"h","startedAt":"x"}']) {
      await writeFile(layout.runLock(RUN), garbage);
      const result = acquireRunLock(layout, RUN, { pid: process.pid, hostname: host, now: T0 });
      assert.ok(result.ok, garbage);
      assert.equal(result.recovered, true);
      assert.equal(result.previous, undefined);
      result.lock.release();
    }
  });
});

test('release removes the lock only while it is still ours; it is idempotent', async () => {
  await withTempDir(async (dir) => {
    const layout = await runDir(dir);
    const mine = acquireRunLock(layout, RUN, { pid: process.pid, hostname: host, now: T0 });
    assert.ok(mine.ok);
    // Another process judged it stale and took it over (same pid here, different acquisition).
    const theirs = JSON.stringify({ pid: process.pid, hostname: host, startedAt: T0.toISOString(), token: 'other1' });
    await writeFile(layout.runLock(RUN), theirs);
    mine.lock.release();
    assert.equal(await readFile(layout.runLock(RUN), 'utf8'), theirs);
    mine.lock.release();
    assert.equal(existsSync(layout.runLock(RUN)), true);
  });
});

test('releaseOnExit releases on the exit event and can be unregistered', async () => {
  await withTempDir(async (dir) => {
    const layout = await runDir(dir);
    const result = acquireRunLock(layout, RUN, { pid: process.pid, hostname: host, now: T0 });
    assert.ok(result.ok);
    const proc = new EventEmitter();
    const off = releaseOnExit(result.lock, proc as unknown as NodeJS.Process);
    assert.equal(proc.listenerCount('exit'), 1);
    proc.emit('exit', 0);
    assert.equal(existsSync(layout.runLock(RUN)), false);
    off();
    assert.equal(proc.listenerCount('exit'), 0);
  });
});

test('locking a run that does not exist is refused, not created', async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    const result = acquireRunLock(layout, 'nope', { pid: process.pid, hostname: host, now: T0 });
    assert.equal(result.ok, false);
    assert.match(!result.ok ? result.error : '', /run nope does not exist/);
    assert.equal(existsSync(layout.runDir('nope')), false);
  });
});
