import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, chown, mkdir, readFile, writeFile, access } from 'node:fs/promises';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { build } from 'esbuild';
import { layoutFor, WORKSPACE_VERSION } from '../../../src/storage/layout';
import { checkWorkspace, ensureWorkspace } from '../../../src/storage/workspace';
import { LegionError } from '../../../src/errors';
import { withTempDir } from '../../helpers/tmp';

test('layout: the paths of docs/design.md#files-on-disk', () => {
  const l = layoutFor('/w');
  assert.equal(l.legionDir, '/w/.legion');
  assert.equal(l.participant('ur-agent'), '/w/.legion/collective/participants/ur-agent.json');
  assert.equal(l.sessionFile('r1', 'session-user__ur-agent__default'), '/w/.legion/runs/r1/sessions/session-user__ur-agent__default.jsonl');
  assert.equal(l.events('r1'), '/w/.legion/runs/r1/events.jsonl');
  assert.equal(l.approvals('r1'), '/w/.legion/runs/r1/approvals.jsonl');
  assert.equal(l.runFile('r1'), '/w/.legion/runs/r1/run.json');
  assert.equal(l.audit(new Date('2026-03-04T23:00:00Z')), '/w/.legion/audit/audit-2026-03-04.jsonl');
});

test('checkWorkspace: no .legion/ → ok, not existing; ensureWorkspace creates it; then ok, existing', async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    assert.deepEqual(await checkWorkspace(layout), { ok: true, exists: false });
    await ensureWorkspace(layout);
    await ensureWorkspace(layout); // idempotent
    for (const p of [layout.participantsDir, layout.runsDir, layout.auditDir]) await access(p);
    assert.deepEqual(JSON.parse(await readFile(layout.marker, 'utf8')), { version: WORKSPACE_VERSION, createdBy: 'legion' });
    assert.deepEqual(await checkWorkspace(layout), { ok: true, exists: true });
  });
});

test('checkWorkspace: a .legion/ without marker is accepted as existing', async () => {
  await withTempDir(async (dir) => {
    await mkdir(join(dir, '.legion'));
    assert.deepEqual(await checkWorkspace(layoutFor(dir)), { ok: true, exists: true });
  });
});

test('checkWorkspace: a newer version is a clear error that says to upgrade, and nothing is changed', async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    await mkdir(layout.legionDir);
    const marker = JSON.stringify({ version: WORKSPACE_VERSION + 1 });
    await writeFile(layout.marker, marker);
    const check = await checkWorkspace(layout);
    assert.equal(check.ok, false);
    assert.ok(!check.ok && check.error.includes(layout.legionDir) && /newer Legion/.test(check.error) && /upgrade/.test(check.error), !check.ok ? check.error : '');
    assert.ok(!check.ok && !check.error.includes('\n'));
    assert.equal(await readFile(layout.marker, 'utf8'), marker);
  });
});

test('checkWorkspace: a damaged marker (cut in half, or no version) names the file', async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    await mkdir(layout.legionDir);
    await writeFile(layout.marker, '{"version": 1, "crea');
    const torn = await checkWorkspace(layout);
    assert.ok(!torn.ok && torn.error.startsWith(`${layout.marker}: not valid JSON`), JSON.stringify(torn));
    await writeFile(layout.marker, '{"createdBy":"legion"}');
    const noVersion = await checkWorkspace(layout);
    assert.ok(!noVersion.ok && noVersion.error === `${layout.marker}: missing "version"`, JSON.stringify(noVersion));
    await writeFile(layout.marker, '[]');
    assert.equal((await checkWorkspace(layout)).ok, false);
  });
});

/** chmod does not restrict root: find out by trying to write. */
async function chmodRestricts(dir: string): Promise<boolean> {
  try {
    await writeFile(join(dir, 'probe'), 'x');
    return false;
  } catch {
    return true;
  }
}

const unwritableProbe = (moduleFile: string, root: string) => `
  import { layoutFor, checkWorkspace, ensureWorkspace } from ${JSON.stringify(moduleFile)};
  const layout = layoutFor(${JSON.stringify(root)});
  const check = await checkWorkspace(layout);
  let ensure = 'ok';
  try { await ensureWorkspace(layout); } catch (e) { ensure = e.name + ': ' + e.message; }
  process.stdout.write(JSON.stringify({ check, ensure }));`;

test('checkWorkspace / ensureWorkspace: an unwritable .legion/ is a clear error', async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    await ensureWorkspace(layout);
    await chmod(layout.legionDir, 0o500);
    try {
      let check: unknown;
      let ensure: string;
      if (await chmodRestricts(layout.legionDir)) {
        check = await checkWorkspace(layout);
        ensure = await ensureWorkspace(layout).then(() => 'ok', (e: Error) => `${e.name}: ${e.message}`);
      } else {
        // Running as root, where chmod does not restrict: hand the workspace to an
        // unprivileged owner and ask again as that owner.
        assert.equal(process.getuid?.(), 0, 'chmod only fails to restrict root');
        for (const p of [dir, layout.legionDir, layout.marker]) await chown(p, 65534, 65534);
        const moduleFile = join(dir, 'workspace.mjs');
        await writeFile(moduleFile, '');
        await build({ stdin: { contents: "export * from './src/storage/workspace'; export * from './src/storage/layout';", resolveDir: process.cwd(), loader: 'ts' }, outfile: moduleFile, bundle: true, platform: 'node', format: 'esm', logLevel: 'silent', allowOverwrite: true });
        await chmod(moduleFile, 0o644);
        const child = spawnSync(process.execPath, ['--input-type=module', '-e', unwritableProbe(moduleFile, dir)], { uid: 65534, gid: 65534, encoding: 'utf8', cwd: '/' });
        assert.equal(child.status, 0, child.stderr);
        ({ check, ensure } = JSON.parse(child.stdout) as { check: unknown; ensure: string });
      }
      assert.deepEqual(check, { ok: false, error: `${layout.legionDir} is not writable: check its permissions` });
      assert.equal(ensure, `LegionError: ${layout.legionDir} is not writable (EACCES): check its permissions`);
    } finally {
      await chmod(layout.legionDir, 0o700);
    }
  });
});

test('ensureWorkspace: a file where .legion/ should be is an error, not a crash', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, '.legion'), 'not a folder');
    await assert.rejects(ensureWorkspace(layoutFor(dir)), (e: unknown) => e instanceof LegionError && e.message.startsWith(`${join(dir, '.legion')}: a file is in the way`));
  });
});
