import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { recordCall } from '../../../src/storage/sandbox-calls';
import { withTempDir } from '../../helpers/tmp';
import {
  checkWorkspaceTrust, revokeWorkspaceTrust, trustMarkerFile, untrustedNotice, writeWorkspaceTrust, type TrustPlace,
} from '../../../src/storage/workspace-trust';
import { readTrustRegistry, registerTrusted, registerUsed, revokeEntries, trustRegistryFile } from '../../../src/storage/trust-registry';

/**
 * The trust registry (docs/workspace-trust.md#the-registry): trust needs the marker AND its
 * entry, so a marker written before the registry existed (a nested workspace nobody registered,
 * unhidden since the sandbox stopped searching) is not honoured; a revoked entry outlives a
 * marker moved back into place; a re-created `.legion/` with a copied marker is another folder;
 * a registry that does not read fails closed; concurrent writers lose nothing.
 */
async function setup(dir: string, name = 'ws'): Promise<TrustPlace> {
  const workspaceRoot = join(dir, name);
  await mkdir(join(workspaceRoot, '.legion'), { recursive: true });
  return { workspaceRoot, userDir: join(dir, 'home', '.config', 'legion') };
}

test('a marker without its registry entry (written by a Legion from before the registry) is untrusted, saying to run legion trust; legion trust restores it', async () => {
  await withTempDir(async (dir) => {
    const place = await setup(dir);
    assert.ok((await writeWorkspaceTrust(place)).ok);
    assert.equal((await checkWorkspaceTrust(place)).trusted, true);
    // What an older Legion left: the marker alone.
    await rm(trustRegistryFile(place.userDir));
    const trust = await checkWorkspaceTrust(place);
    assert.equal(!trust.trusted && trust.reason, 'unregistered');
    assert.match(untrustedNotice(trust)!, /run legion trust .*trusted by a Legion from before the trust registry/);
    assert.ok((await writeWorkspaceTrust(place)).ok);
    assert.equal((await checkWorkspaceTrust(place)).trusted, true);
  });
});

test('a revoked entry keeps a workspace untrusted even where its marker verifies (moved away and back)', async () => {
  await withTempDir(async (dir) => {
    const place = await setup(dir);
    assert.ok((await writeWorkspaceTrust(place)).ok);
    const file = trustRegistryFile(place.userDir);
    const read = readTrustRegistry(file);
    assert.ok(read.ok);
    assert.ok(revokeEntries(file, read.registry.workspaces, 'moved while a sandboxed command ran').ok);
    await rename(place.workspaceRoot, join(dir, 'away'));
    await rename(join(dir, 'away'), place.workspaceRoot);
    const trust = await checkWorkspaceTrust(place);
    assert.equal(!trust.trusted && trust.reason, 'revoked');
    assert.match(untrustedNotice(trust)!, /revoked at .*moved while a sandboxed command ran/);
    // A revocation judged on an older entry does not undo a newer trust.
    assert.ok((await writeWorkspaceTrust(place)).ok);
    assert.ok(revokeEntries(file, read.registry.workspaces, 'stale judgement').ok);
    assert.equal((await checkWorkspaceTrust(place)).trusted, true);
  });
});

test('a .legion/ re-created at the same path, the marker copied in: not the folder that was trusted', async () => {
  await withTempDir(async (dir) => {
    const place = await setup(dir);
    assert.ok((await writeWorkspaceTrust(place)).ok);
    const marker = await readFile(trustMarkerFile(place.workspaceRoot));
    await rm(join(place.workspaceRoot, '.legion'), { recursive: true });
    await mkdir(join(place.workspaceRoot, '.legion'));
    await writeFile(trustMarkerFile(place.workspaceRoot), marker);
    const trust = await checkWorkspaceTrust(place);
    assert.equal(!trust.trusted && trust.reason, 'mismatch');
    assert.match(untrustedNotice(trust)!, /not the folder you trusted/);
  });
});

test('legion trust --revoke removes the marker and the entry', async () => {
  await withTempDir(async (dir) => {
    const place = await setup(dir);
    assert.ok((await writeWorkspaceTrust(place)).ok);
    assert.equal(await revokeWorkspaceTrust(place), true);
    const read = readTrustRegistry(trustRegistryFile(place.userDir));
    assert.ok(read.ok);
    assert.deepEqual(read.registry.workspaces, []);
    assert.equal(await revokeWorkspaceTrust(place), false);
  });
});

test('a registry that does not read (corrupt, foreign, writable by others) fails closed with one line, and is never rewritten', async () => {
  await withTempDir(async (dir) => {
    const place = await setup(dir);
    assert.ok((await writeWorkspaceTrust(place)).ok);
    const file = trustRegistryFile(place.userDir);
    const good = readFileSync(file, 'utf8');
    for (const bad of ['{"version":1', JSON.stringify({ version: 1, serial: 0, workspaces: [{ root: '/x', ino: 'NaN', born: '0', serial: 0, state: 'trusted', at: '' }] }), JSON.stringify({ version: 1, serial: 0, workspaces: [], extra: true })]) {
      writeFileSync(file, bad);
      const trust = await checkWorkspaceTrust(place);
      assert.equal(!trust.trusted && trust.reason, 'unreadable', bad);
      assert.match(untrustedNotice(trust)!, /trusted-workspaces\.json .*remove it, then run legion trust/);
      const written = await writeWorkspaceTrust(place);
      assert.equal(written.ok, false);
      assert.equal(readFileSync(file, 'utf8'), bad, 'a registry that does not read was rewritten');
    }
    writeFileSync(file, good);
    await chmod(file, 0o622);
    const shared = await checkWorkspaceTrust(place);
    assert.match(!shared.trusted ? shared.detail : '', /writable by others/);
    await chmod(file, 0o600);
    assert.equal((await checkWorkspaceTrust(place)).trusted, true);
  });
});

test('concurrent writers (six processes trusting five workspaces each at once) lose no entry; a lock left by a dead process is taken over', async () => {
  await withTempDir(async (dir) => {
    const userDir = join(dir, 'home', '.config', 'legion');
    await mkdir(userDir, { recursive: true });
    const file = trustRegistryFile(userDir);
    const roots: string[][] = [];
    for (let p = 0; p < 6; p++) {
      roots.push([]);
      for (let i = 0; i < 5; i++) {
        const root = join(dir, `p${p}w${i}`);
        await mkdir(join(root, '.legion'), { recursive: true });
        roots[p]!.push(root);
      }
    }
    // A lock whose holder is gone (a crash mid-write).
    writeFileSync(`${file}.lock`, '999999999\nabc\n');
    const module = resolve('src/storage/trust-registry.ts');
    const children = roots.map((mine) => new Promise<number>((done, fail) => {
      const script = `import { registerTrusted } from ${JSON.stringify(module)}; for (const r of ${JSON.stringify(mine)}) { const w = registerTrusted(${JSON.stringify(file)}, r); if (!w.ok) { console.error(w.error); process.exit(1); } }`;
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'inherit'] });
      child.on('error', fail);
      child.on('exit', (code) => done(code ?? 1));
    }));
    assert.deepEqual(await Promise.all(children), [0, 0, 0, 0, 0, 0]);
    const read = readTrustRegistry(file);
    assert.ok(read.ok);
    assert.deepEqual(read.registry.workspaces.map((e) => e.root).sort(), roots.flat().sort());
    assert.equal(new Set(read.registry.workspaces.map((e) => e.serial)).size, 30, 'each write had its own serial');
    assert.equal(read.registry.serial, 30);
    assert.ok(registerTrusted(file, roots[0]![0]!).ok);
  });
});

test('a workspace Legion started in untrusted is recorded as used: never trusted by it (a pre-registry marker stays untrusted), never downgrading a trusted entry; used entries of removed folders are dropped', async () => {
  await withTempDir(async (dir) => {
    const place = await setup(dir);
    const file = trustRegistryFile(place.userDir);
    assert.ok((await writeWorkspaceTrust(place)).ok);
    assert.ok(registerUsed(file, place.workspaceRoot).ok);
    assert.equal((await checkWorkspaceTrust(place)).trusted, true, 'a trusted entry is kept');
    await rm(file);
    assert.ok(registerUsed(file, place.workspaceRoot).ok, 'the start of a pre-registry workspace');
    const trust = await checkWorkspaceTrust(place);
    assert.equal(!trust.trusted && trust.reason, 'unregistered');
    const gone = await setup(dir, 'gone');
    assert.ok(registerUsed(file, gone.workspaceRoot).ok);
    await rm(gone.workspaceRoot, { recursive: true });
    const third = await setup(dir, 'third');
    assert.ok(registerUsed(file, third.workspaceRoot).ok);
    const read = readTrustRegistry(file);
    assert.ok(read.ok);
    assert.deepEqual(read.registry.workspaces.map((e) => [e.root, e.state]), [[place.workspaceRoot, 'used'], [third.workspaceRoot, 'used']]);
  });
});

test('a sandboxed call in flight: a workspace trusted in its reach after it began is not honoured (exposed); its Legion killed before its check: revoked at the next check, the record dropped', async () => {
  await withTempDir(async (dir) => {
    const outer = await setup(dir, 'outer');
    const file = trustRegistryFile(outer.userDir);
    assert.ok((await writeWorkspaceTrust(outer)).ok);
    const serial = readTrustRegistry(file);
    assert.ok(serial.ok);
    const release = recordCall(file, { root: outer.workspaceRoot, serial: serial.registry.serial });
    const nested = await setup(dir, 'outer/packages/app');
    const elsewhere = await setup(dir, 'elsewhere');
    assert.ok((await writeWorkspaceTrust(nested)).ok);
    assert.ok((await writeWorkspaceTrust(elsewhere)).ok);
    const exposed = await checkWorkspaceTrust(nested);
    assert.equal(!exposed.trusted && exposed.reason, 'exposed');
    assert.equal((await checkWorkspaceTrust(elsewhere)).trusted, true, 'outside the call\'s workspace: not exposed');
    assert.equal((await checkWorkspaceTrust(outer)).trusted, true, 'the workspace\'s own .legion/ is hidden in every call');
    release();
    assert.equal((await checkWorkspaceTrust(nested)).trusted, true, 'the record gone (the sandbox revokes on its own check)');
    // The same record left by a Legion that died mid-call (its check never ran).
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
    const deadPid = Number(String(dead.stdout));
    const callsDir = join(outer.userDir, 'sandbox-calls');
    const record = join(callsDir, `${deadPid}-x.json`);
    writeFileSync(record, JSON.stringify({ pid: deadPid, root: outer.workspaceRoot, serial: serial.registry.serial }));
    const revoked = await checkWorkspaceTrust(nested);
    assert.equal(!revoked.trusted && revoked.reason, 'revoked');
    assert.match(untrustedNotice(revoked)!, /ended before its check/);
    assert.equal(existsSync(record), false, 'the dead call\'s record is dropped once settled');
    assert.equal((await checkWorkspaceTrust(elsewhere)).trusted, true);
    // Trusting again while such a record is still there: it is settled first, so it does not revoke the new trust.
    writeFileSync(record, JSON.stringify({ pid: deadPid, root: outer.workspaceRoot, serial: serial.registry.serial }));
    assert.ok((await writeWorkspaceTrust(nested)).ok);
    assert.equal((await checkWorkspaceTrust(nested)).trusted, true, 'a crash before the trust revoked the trust made after it');
  });
});

test('a revocation whose reason is longer than the registry keeps (a deep workspace path) still leaves a registry that reads', async () => {
  await withTempDir(async (dir) => {
    const place = await setup(dir);
    assert.ok((await writeWorkspaceTrust(place)).ok);
    const file = trustRegistryFile(place.userDir);
    const read = readTrustRegistry(file);
    assert.ok(read.ok);
    assert.ok(revokeEntries(file, read.registry.workspaces, `moved while a call ran in /${'deep/'.repeat(600)}`).ok);
    const after = readTrustRegistry(file);
    assert.ok(after.ok, !after.ok ? after.error : '');
    const trust = await checkWorkspaceTrust(place);
    assert.equal(!trust.trusted && trust.reason, 'revoked');
  });
});
