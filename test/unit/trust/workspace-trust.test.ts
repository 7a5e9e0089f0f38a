import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, cp, mkdir, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { withTempDir } from '../../helpers/tmp';
import {
  checkWorkspaceTrust, revokeWorkspaceTrust, trustKeyFile, trustMarkerFile, untrustedNotice, writeWorkspaceTrust, type TrustPlace,
} from '../../../src/storage/workspace-trust';

/** A workspace with a `.legion/` and a user config folder, both under `dir`. */
async function setup(dir: string, name = 'ws'): Promise<TrustPlace> {
  const workspaceRoot = join(dir, name);
  await mkdir(join(workspaceRoot, '.legion'), { recursive: true });
  return { workspaceRoot, userDir: join(dir, 'home', '.config', 'legion') };
}

test('no .legion/: untrusted as absent, with no notice (nothing to ignore)', async () => {
  await withTempDir(async (dir) => {
    const trust = await checkWorkspaceTrust({ workspaceRoot: dir, userDir: join(dir, 'u') });
    assert.equal(trust.trusted, false);
    assert.equal(!trust.trusted && trust.reason, 'absent');
    assert.equal(untrustedNotice(trust), null);
  });
});

test('a .legion/ without a marker is untrusted, and the notice names what is ignored and the command', async () => {
  await withTempDir(async (dir) => {
    const place = await setup(dir);
    const trust = await checkWorkspaceTrust(place);
    assert.equal(!trust.trusted && trust.reason, 'no-marker');
    const notice = untrustedNotice(trust)!;
    assert.match(notice, /untrusted workspace/);
    assert.match(notice, /\.legion\/config\.yaml/);
    assert.match(notice, /allow rules/);
    assert.match(notice, /approvalAuthority/);
    assert.match(notice, /allowances/);
    assert.match(notice, /legion trust/);
    assert.ok(!notice.includes('\n'));
  });
});

test('writeWorkspaceTrust: creates the key 0600 in the user folder (0700), the marker verifies; revoke removes it', async () => {
  await withTempDir(async (dir) => {
    const place = await setup(dir);
    const written = await writeWorkspaceTrust(place);
    assert.ok(written.ok);
    assert.equal((await stat(trustKeyFile(place.userDir))).mode & 0o777, 0o600);
    assert.equal((await stat(place.userDir)).mode & 0o777, 0o700);
    assert.equal((await stat(trustMarkerFile(place.workspaceRoot))).mode & 0o777, 0o600);
    assert.deepEqual(await checkWorkspaceTrust(place), { trusted: true });
    // The key is not in the workspace, and the marker does not hold it.
    const key = (await readFile(trustKeyFile(place.userDir), 'utf8')).trim();
    assert.ok(!(await readFile(trustMarkerFile(place.workspaceRoot), 'utf8')).includes(key));
    assert.equal(await revokeWorkspaceTrust(place), true);
    assert.equal(await revokeWorkspaceTrust(place), false);
    const after = await checkWorkspaceTrust(place);
    assert.equal(!after.trusted && after.reason, 'no-marker');
  });
});

test('a second trust reuses the key: two workspaces of one user both verify', async () => {
  await withTempDir(async (dir) => {
    const a = await setup(dir, 'a');
    const b = await setup(dir, 'b');
    assert.ok((await writeWorkspaceTrust(a)).ok);
    const key = await readFile(trustKeyFile(a.userDir), 'utf8');
    assert.ok((await writeWorkspaceTrust(b)).ok);
    assert.equal(await readFile(trustKeyFile(a.userDir), 'utf8'), key);
    assert.equal((await checkWorkspaceTrust(a)).trusted, true);
    assert.equal((await checkWorkspaceTrust(b)).trusted, true);
  });
});

test('a marker copied to another workspace, or a moved workspace, does not verify', async () => {
  await withTempDir(async (dir) => {
    const a = await setup(dir, 'a');
    const b = await setup(dir, 'b');
    assert.ok((await writeWorkspaceTrust(a)).ok);
    await cp(trustMarkerFile(a.workspaceRoot), trustMarkerFile(b.workspaceRoot));
    const copied = await checkWorkspaceTrust(b);
    assert.equal(!copied.trusted && copied.reason, 'mismatch');
    assert.match(untrustedNotice(copied)!, /moved, copied or cloned/);
    await rename(a.workspaceRoot, join(dir, 'moved'));
    const moved = await checkWorkspaceTrust({ ...a, workspaceRoot: join(dir, 'moved') });
    assert.equal(!moved.trusted && moved.reason, 'mismatch');
  });
});

test('a path through a symbolic link is the same workspace (the real path is signed)', async () => {
  await withTempDir(async (dir) => {
    const a = await setup(dir, 'a');
    assert.ok((await writeWorkspaceTrust(a)).ok);
    await symlink(a.workspaceRoot, join(dir, 'link'));
    assert.equal((await checkWorkspaceTrust({ ...a, workspaceRoot: join(dir, 'link') })).trusted, true);
  });
});

test('another user\'s key (a different key file) does not verify the marker', async () => {
  await withTempDir(async (dir) => {
    const place = await setup(dir);
    assert.ok((await writeWorkspaceTrust(place)).ok);
    const other = { ...place, userDir: join(dir, 'other', '.config', 'legion') };
    assert.ok((await writeWorkspaceTrust({ ...other, workspaceRoot: (await setup(dir, 'elsewhere')).workspaceRoot })).ok);
    const trust = await checkWorkspaceTrust(other);
    assert.equal(!trust.trusted && trust.reason, 'mismatch');
  });
});

test('a tampered marker (one digit changed, truncated, trailing text) does not verify', async () => {
  await withTempDir(async (dir) => {
    const place = await setup(dir);
    assert.ok((await writeWorkspaceTrust(place)).ok);
    const file = trustMarkerFile(place.workspaceRoot);
    const good = await readFile(file, 'utf8');
    const last = good.trimEnd().at(-1)!;
    for (const bad of [good.trimEnd().slice(0, -1) + (last === '0' ? '1' : '0') + '\n', good.slice(0, 20), good + 'x', '', good.toUpperCase()]) {
      await writeFile(file, bad);
      const trust = await checkWorkspaceTrust(place);
      assert.equal(!trust.trusted && trust.reason, 'mismatch', JSON.stringify(bad));
    }
    await writeFile(file, good);
    assert.equal((await checkWorkspaceTrust(place)).trusted, true);
  });
});

test('a missing key file: untrusted (a marker cannot be checked), and checking never creates the key', async () => {
  await withTempDir(async (dir) => {
    const place = await setup(dir);
    assert.ok((await writeWorkspaceTrust(place)).ok);
    await rm(trustKeyFile(place.userDir));
    const trust = await checkWorkspaceTrust(place);
    assert.equal(!trust.trusted && trust.reason, 'no-key');
    await assert.rejects(stat(trustKeyFile(place.userDir)));
    // Trusting again makes a new key; the old marker is replaced.
    assert.ok((await writeWorkspaceTrust(place)).ok);
    assert.equal((await checkWorkspaceTrust(place)).trusted, true);
  });
});

test('a key file others can read or write: untrusted with a clear line, and never used to write a marker', async () => {
  await withTempDir(async (dir) => {
    const place = await setup(dir);
    assert.ok((await writeWorkspaceTrust(place)).ok);
    for (const mode of [0o644, 0o620, 0o604]) {
      await chmod(trustKeyFile(place.userDir), mode);
      const trust = await checkWorkspaceTrust(place);
      assert.equal(!trust.trusted && trust.reason, 'unsafe-key', mode.toString(8));
      assert.match(untrustedNotice(trust)!, /readable or writable by others/);
      const written = await writeWorkspaceTrust(place);
      assert.equal(written.ok, false);
      assert.equal(!written.ok && written.kind, 'unsafe-key');
    }
  });
});

test('a key file that is a symbolic link or not a key: unsafe', async () => {
  await withTempDir(async (dir) => {
    const place = await setup(dir);
    assert.ok((await writeWorkspaceTrust(place)).ok);
    const key = trustKeyFile(place.userDir);
    await rename(key, join(dir, 'real-key'));
    await symlink(join(dir, 'real-key'), key);
    assert.equal(((await checkWorkspaceTrust(place)) as { reason?: string }).reason, 'unsafe-key');
    await rm(key);
    await writeFile(key, 'not a key\n', { mode: 0o600 });
    assert.equal(((await checkWorkspaceTrust(place)) as { reason?: string }).reason, 'unsafe-key');
  });
});

test('a marker that is not a small regular file (a link to /dev/zero, a FIFO, a huge file) is refused without being read', async () => {
  await withTempDir(async (dir) => {
    const place = await setup(dir);
    assert.ok((await writeWorkspaceTrust(place)).ok);
    const file = trustMarkerFile(place.workspaceRoot);
    await rm(file);
    await symlink('/dev/zero', file);
    const zero = await checkWorkspaceTrust(place);
    assert.equal(!zero.trusted && zero.reason, 'mismatch');
    await rm(file);
    execFileSync('mkfifo', [file]); // reading a FIFO with no writer would block the start forever
    const fifo = await checkWorkspaceTrust(place);
    assert.equal(!fifo.trusted && fifo.reason, 'mismatch');
    await rm(file);
    await writeFile(file, 'x'.repeat(1024 * 1024));
    const huge = await checkWorkspaceTrust(place);
    assert.equal(!huge.trusted && huge.reason, 'mismatch');
  });
});

test('the check makes no promised file call (every start runs it before its first frame: docs/performance.md#start-up)', async () => {
  await withTempDir(async (dir) => {
    const place = await setup(dir);
    assert.ok((await writeWorkspaceTrust(place)).ok);
    // Each verdict's path: trusted, no marker, no `.legion/`.
    const places = [place, await setup(dir, 'other'), { workspaceRoot: join(dir, 'home'), userDir: place.userDir }];
    for (const p of places) {
      // What is pending before it (a file handle of the set-up still closing) is not the check's.
      const inPool = (): number => process.getActiveResourcesInfo().filter((r) => r.startsWith('FSReq')).length;
      const before = inPool();
      const pending = checkWorkspaceTrust(p);
      const after = inPool();
      const verdict = await pending;
      assert.equal(after - before, 0, `promised file calls pending after the check began (${JSON.stringify(verdict)})`);
    }
    assert.deepEqual(await checkWorkspaceTrust(place), { trusted: true });
  });
});
