import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { chmodSync, chownSync, existsSync, mkdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { claimServerInfo, outsideSocketName as outsideName, prepareSocketDir, serveInfoFile, socketPathFor, type ServerInfo } from '../../../src/serve/discovery';
import { locateServer } from '../../../src/serve/locate';
import { withTempDir } from '../../helpers/tmp';

const HOST = 'this-host';
const info = (legionDir: string, over: Partial<ServerInfo> = {}): ServerInfo => ({
  pid: 4242, hostname: HOST, socket: join(legionDir, 'serve.sock'), runId: 'run-1', startedAt: '2026-01-01T00:00:00.000Z', version: 't', ...over,
});

async function listening(path: string): Promise<() => Promise<void>> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(path, r));
  return () => new Promise<void>((r) => server.close(() => r()));
}

test('locate: no serve.json is no server; a live one that answers is running; one of another host counts as running', async () => {
  await withTempDir(async (dir) => {
    assert.deepEqual(await locateServer(dir, { hostname: HOST }), { kind: 'none' });
    const mine = info(dir);
    assert.equal(claimServerInfo(dir, mine), true);
    assert.equal(claimServerInfo(dir, mine), false, 'created exclusively: the one-server lock');
    assert.equal(statSync(serveInfoFile(dir)).mode & 0o777, 0o600);
    assert.deepEqual(await locateServer(dir, { hostname: HOST, isAlive: () => true, probe: async () => true }), { kind: 'running', info: mine });
    // Another host's server cannot be checked from here: never taken for stale.
    const found = await locateServer(dir, { hostname: 'elsewhere', isAlive: () => false, probe: async () => false });
    assert.equal(found.kind, 'running');
    assert.ok(existsSync(serveInfoFile(dir)));
  });
});

test('locate: a server whose process is gone (SIGKILL) is stale: serve.json and its socket are removed, with one notice', async () => {
  await withTempDir(async (dir) => {
    const mine = info(dir);
    const close = await listening(mine.socket);
    try {
      claimServerInfo(dir, mine);
      const found = await locateServer(dir, { hostname: HOST, isAlive: () => false });
      assert.deepEqual(found, { kind: 'none', recovered: `the Legion server of this workspace (pid 4242) is gone: removed its stale ${serveInfoFile(dir)} and socket` });
      assert.ok(!existsSync(serveInfoFile(dir)));
      assert.ok(!existsSync(mine.socket), 'the socket file is removed');
    } finally {
      await close();
    }
  });
});

test('locate: a live pid whose socket does not answer is a server starting for 3 s, then stale (a reused pid)', async () => {
  await withTempDir(async (dir) => {
    claimServerInfo(dir, info(dir));
    const born = statSync(serveInfoFile(dir)).mtimeMs;
    const deps = { hostname: HOST, isAlive: () => true, probe: async () => false };
    assert.equal((await locateServer(dir, { ...deps, now: () => born + 1_000 })).kind, 'running');
    const late = await locateServer(dir, { ...deps, now: () => born + 10_000 });
    assert.equal(late.kind, 'none');
    assert.match(late.kind === 'none' ? late.recovered ?? '' : '', /is gone: removed its stale/);
    assert.ok(!existsSync(serveInfoFile(dir)));
  });
});

test('locate: an unreadable serve.json is left alone while it may be being written, then removed', async () => {
  await withTempDir(async (dir) => {
    writeFileSync(serveInfoFile(dir), '{"pid":');
    const born = statSync(serveInfoFile(dir)).mtimeMs;
    assert.deepEqual(await locateServer(dir, { hostname: HOST, now: () => born + 500 }), { kind: 'none' });
    assert.ok(existsSync(serveInfoFile(dir)));
    assert.deepEqual(await locateServer(dir, { hostname: HOST, now: () => born + 10_000 }), { kind: 'none', recovered: `removed an unreadable ${serveInfoFile(dir)}` });
    assert.ok(!existsSync(serveInfoFile(dir)));
  });
});

test('locate: a stale serve.json replaced by a new server while it was judged is left to the new server', async () => {
  await withTempDir(async (dir) => {
    claimServerInfo(dir, info(dir));
    const fresh = info(dir, { pid: 5151 });
    let replaced = false;
    const found = await locateServer(dir, {
      hostname: HOST,
      isAlive: (pid) => pid === 4242 || pid === 5151,
      // While the old server is being judged (its socket does not answer), a new one takes over.
      probe: async () => {
        if (replaced) return true; // the new server answers on the same path
        if (!replaced) {
          replaced = true;
          rmSync(serveInfoFile(dir));
          assert.equal(claimServerInfo(dir, fresh), true);
        }
        return false;
      },
      now: () => Date.now() + 10_000,
    });
    assert.deepEqual(found, { kind: 'running', info: fresh });
    assert.ok(existsSync(serveInfoFile(dir)), 'the new server keeps its serve.json');
  });
});

test('socket path: .legion/serve.sock when short enough; else a private XDG_RUNTIME_DIR, else <tmp>/legion-<uid>/', async () => {
  await withTempDir(async (dir) => {
    const uid = process.getuid?.() ?? 0;
    assert.equal(socketPathFor(join(dir, '.legion'), {}, uid), join(dir, '.legion', 'serve.sock'));
    const deep = join(dir, 'x'.repeat(120), '.legion');
    const runtime = join(dir, 'run');
    mkdirSync(runtime, { mode: 0o700 });
    const inRuntime = socketPathFor(deep, { XDG_RUNTIME_DIR: runtime }, uid);
    assert.match(inRuntime, new RegExp(`^${runtime}/legion-[0-9a-f]{16}\\.sock$`));
    assert.equal(socketPathFor(deep, { XDG_RUNTIME_DIR: runtime }, uid), inRuntime, 'stable for a workspace');
    assert.notEqual(socketPathFor(`${deep}2`, { XDG_RUNTIME_DIR: runtime }, uid), inRuntime, 'another workspace, another name');
    chmodSync(runtime, 0o755);
    assert.match(socketPathFor(deep, { XDG_RUNTIME_DIR: runtime }, uid), new RegExp(`^${tmpdir()}/legion-${uid}/legion-[0-9a-f]{16}\\.sock$`), 'a runtime dir others can read is not used');
    assert.match(socketPathFor(deep, { XDG_RUNTIME_DIR: runtime }, uid + 1), new RegExp(`/legion-${uid + 1}/`), 'nor one of another user');
  });
});

test('socket dir: the shared-tmp fallback is created 0700 (tightened if looser), refused when it is not this user\'s directory', async () => {
  await withTempDir(async (dir) => {
    const uid = process.getuid?.() ?? 0;
    const legionDir = join(dir, '.legion');
    assert.equal(prepareSocketDir(join(legionDir, 'serve.sock'), legionDir, uid), null, 'nothing to do in .legion/');
    const made = join(dir, 'legion-made');
    assert.equal(prepareSocketDir(join(made, 's.sock'), legionDir, uid), null);
    assert.equal(statSync(made).mode & 0o777, 0o700);
    const loose = join(dir, 'legion-loose');
    mkdirSync(loose, { mode: 0o777 });
    chmodSync(loose, 0o777);
    assert.equal(prepareSocketDir(join(loose, 's.sock'), legionDir, uid), null);
    assert.equal(statSync(loose).mode & 0o777, 0o700);
    // Someone else's directory (here: owned by another uid than the one given), or a symlink planted there.
    assert.match(prepareSocketDir(join(loose, 's.sock'), legionDir, uid + 1) ?? '', /is not a directory of this user: the socket is not put there$/);
    const planted = join(dir, 'legion-planted');
    symlinkSync(made, planted);
    assert.match(prepareSocketDir(join(planted, 's.sock'), legionDir, uid) ?? '', /is not a directory of this user/);
  });
});

test('locate: serve.json naming a socket that is not this workspace\'s own, in its private directory, owned by the user, is refused; nothing is removed', async () => {
  await withTempDir(async (root) => {
    const dir = join(root, 'legion');
    mkdirSync(dir, { mode: 0o700 });
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o700 });
    const foreign = join(elsewhere, 'evil.sock');
    const close = await listening(foreign);
    const deps = { hostname: HOST, isAlive: () => true, probe: async () => true };
    const refusedWith = async (socket: string): Promise<string> => {
      rmSync(serveInfoFile(dir), { force: true });
      claimServerInfo(dir, info(dir, { socket }));
      const found = await locateServer(dir, deps);
      assert.equal(found.kind, 'refused', JSON.stringify(found));
      assert.ok(existsSync(serveInfoFile(dir)), 'left for the user to look at');
      return found.kind === 'refused' ? found.error : '';
    };
    try {
      // Another path altogether.
      const error = await refusedWith(foreign);
      assert.match(error, /^refusing the server \S+serve\.json names: \S+evil\.sock is not this workspace's socket \(\S+serve\.sock or …\/legion-[0-9a-f]{16}\.sock\); if no Legion server runs here, remove \S+serve\.json$/);
      assert.ok(existsSync(foreign), 'the foreign socket is not removed');
      // The right name, but a symlink to the foreign socket.
      symlinkSync(foreign, join(dir, 'serve.sock'));
      assert.match(await refusedWith(join(dir, 'serve.sock')), /serve\.sock is not a socket/);
      rmSync(join(dir, 'serve.sock'));
      // The workspace's own hashed name, but in a directory other users can write.
      chmodSync(elsewhere, 0o777);
      const hashed = join(elsewhere, outsideName(dir));
      assert.match(await refusedWith(hashed), /elsewhere is open to other users \(mode 777; make it 700\)/);
      chmodSync(elsewhere, 0o700);
      // .legion itself open to others.
      chmodSync(dir, 0o755);
      assert.match(await refusedWith(join(dir, 'serve.sock')), /legion is open to other users/);
      chmodSync(dir, 0o700);
      if (process.getuid?.() === 0) {
        // Owned by someone else: the socket, then its directory (only root can set this up).
        const theirs = await listening(join(dir, 'serve.sock'));
        try {
          chownSync(join(dir, 'serve.sock'), 65534, 65534);
          assert.match(await refusedWith(join(dir, 'serve.sock')), /serve\.sock belongs to uid 65534, not to this user \(uid 0\)/);
        } finally {
          await theirs();
        }
        chownSync(elsewhere, 65534, 65534);
        assert.match(await refusedWith(hashed), /elsewhere belongs to uid 65534/);
        chownSync(elsewhere, 0, 0);
      }
      // The workspace's own socket passes.
      rmSync(serveInfoFile(dir));
      claimServerInfo(dir, info(dir));
      assert.equal((await locateServer(dir, deps)).kind, 'running');
      assert.equal((await locateServer(dir, { ...deps, uid: 12345 })).kind, 'refused', 'another user\'s directory');
    } finally {
      await close();
    }
  });
});
