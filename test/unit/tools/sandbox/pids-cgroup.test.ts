import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findPidsCgroups } from '../../../../src/tools/sandbox/pids-cgroup';

// Process-limit cgroups are not left behind (docs/sandbox.md#limits): not by a call whose
// processes outlive it, nor by a Legion process that died before it could remove them.
const V1 = '/sys/fs/cgroup/pids';
const pids = findPidsCgroups();
const skip = pids && existsSync(V1) ? false : 'no writable cgroup v1 pids hierarchy here';

async function until(check: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (check()) return true;
  return check();
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('a call\'s cgroup still holding a process after the call is emptied and removed', { skip }, async () => {
  const cgroup = pids!.create(`legion-${process.pid}-${900_000 + (Date.now() % 100_000)}`, 16)!;
  assert.ok(cgroup, 'a cgroup was made');
  const dir = cgroup.procsFile.slice(0, -'/cgroup.procs'.length);
  // A straggler of the call: a process that joined the cgroup and did not die with the sandbox.
  const straggler = spawn('sh', ['-c', `echo $$ > "${cgroup.procsFile}" && exec sleep 600`], { stdio: 'ignore' });
  await until(() => spawnSync('cat', [cgroup.procsFile], { encoding: 'utf8' }).stdout.trim() !== '', 3000);
  try {
    cgroup.remove();
    assert.ok(await until(() => !existsSync(dir), 8000), `${dir} is still there`);
    assert.ok(await until(() => straggler.exitCode !== null || straggler.signalCode !== null, 3000), 'the straggler was killed');
    assert.equal(alive(straggler.pid!), false);
  } finally {
    straggler.kill('SIGKILL');
    spawnSync('rmdir', [dir]);
  }
});

test('cgroups of a Legion process that is gone are removed when the next one starts', { skip }, async () => {
  // A pid that is not running: a short-lived process that has exited.
  const gone = spawnSync('sh', ['-c', 'echo $$']).stdout.toString().trim();
  const orphan = join(V1, `legion-${gone}-7`);
  mkdirSync(orphan);
  writeFileSync(join(orphan, 'pids.max'), '8');
  const live = join(V1, `legion-${process.pid}-${800_000 + (Date.now() % 100_000)}`);
  mkdirSync(live);
  try {
    findPidsCgroups();
    assert.equal(existsSync(orphan), false, 'the dead process\'s cgroup was removed');
    assert.equal(existsSync(live), true, 'a running process\'s cgroups are not touched');
  } finally {
    for (const dir of [orphan, live]) spawnSync('rmdir', [dir]);
  }
});
