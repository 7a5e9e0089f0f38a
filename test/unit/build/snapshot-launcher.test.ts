import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
// @ts-expect-error: a build script (plain JS, no types)
import { launcherScript, stampOf, SNAPSHOT_V8_FLAGS } from '../../../scripts/snapshot.mjs';

/**
 * The `legion` launcher (dist/legion, scripts/snapshot.mjs) with a stand-in `node` on PATH
 * that prints the arguments it was started with: which start the launcher chose.
 */
interface Layout {
  readonly dist: string;
  readonly blob: string;
  readonly node: string;
  readonly bin: string;
}

function layout(root: string): Layout {
  const dist = join(root, 'dist');
  const bin = join(root, 'bin');
  mkdirSync(dist);
  mkdirSync(bin);
  const node = join(bin, 'node');
  writeFileSync(node, '#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n');
  chmodSync(node, 0o755);
  const blob = join(dist, 'legion-snapshot-0123456789abcdef-v20.0.0-x64.blob');
  writeFileSync(blob, 'blob');
  writeFileSync(stampOf(blob), '');
  // The stamp has the node binary's time (the build copies it with touch -r).
  const r = spawnSync('touch', ['-r', node, stampOf(blob)]);
  assert.equal(r.status, 0);
  writeFileSync(join(dist, 'legion.js'), '');
  writeFileSync(join(dist, 'legion'), launcherScript({ dist, blob }));
  chmodSync(join(dist, 'legion'), 0o755);
  return { dist, blob, node, bin };
}

function launch(l: Layout, args: readonly string[], env: NodeJS.ProcessEnv = {}, launcher = join(l.dist, 'legion')): string[] {
  const r = spawnSync(launcher, [...args], { encoding: 'utf8', env: { PATH: `${l.bin}:/usr/bin:/bin`, ...env } });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\n').slice(0, -1);
}

test('launcher: starts from the snapshot when the blob and its stamp are there and node has the stamp\'s time; arguments pass unchanged', async () => {
  await withTempDir(async (root) => {
    const l = layout(root);
    const args = ['--version', 'two words', "it's", '$HOME', '*', '--'];
    assert.deepEqual(launch(l, args), [...(SNAPSHOT_V8_FLAGS as string[]), '--snapshot-blob', l.blob, '--', ...args], 'the V8 flags the blob was built with, the blob, the arguments');
  });
});

test('launcher: the plain bundle when the blob is missing, when its stamp is missing, when NODE_OPTIONS is set, or when LEGION_SNAPSHOT=0', async () => {
  await withTempDir(async (root) => {
    const l = layout(root);
    assert.deepEqual(launch(l, ['a'], { LEGION_SNAPSHOT: '0' }), [join(l.dist, 'legion.js'), 'a']);
    // V8 flags in NODE_OPTIONS make node refuse a snapshot made without them (exit 14).
    assert.deepEqual(launch(l, ['a'], { NODE_OPTIONS: '--max-old-space-size=4096' }), [join(l.dist, 'legion.js'), 'a']);
    rmSync(stampOf(l.blob));
    assert.deepEqual(launch(l, ['a']), [join(l.dist, 'legion.js'), 'a']);
    writeFileSync(stampOf(l.blob), '');
    spawnSync('touch', ['-r', l.node, stampOf(l.blob)]);
    rmSync(l.blob);
    assert.deepEqual(launch(l, ['a']), [join(l.dist, 'legion.js'), 'a']);
  });
});

test('launcher: the plain bundle when the node on PATH is not the one that made the blob (another time, newer or older)', async () => {
  await withTempDir(async (root) => {
    const l = layout(root);
    const at = Date.now() / 1000;
    utimesSync(l.node, at, at + 60);
    assert.deepEqual(launch(l, ['x']), [join(l.dist, 'legion.js'), 'x'], 'an upgraded node');
    utimesSync(l.node, at, at - 3600);
    assert.deepEqual(launch(l, ['x']), [join(l.dist, 'legion.js'), 'x'], 'an older node');
  });
});

test('launcher: a moved build runs legion.js beside the launcher\'s real path (through a symlink, as npm links it)', async () => {
  await withTempDir(async (root) => {
    const l = layout(root);
    const moved = join(root, 'moved');
    spawnSync('mv', [l.dist, moved]);
    const link = join(root, 'link-to-legion');
    symlinkSync(join(moved, 'legion'), link);
    assert.deepEqual(launch(l, ['y'], {}, link), [join(moved, 'legion.js'), 'y']);
  });
});

test('launcher: the package\'s launcher (no blob) runs legion.js beside its real path', async () => {
  await withTempDir(async (root) => {
    const l = layout(root);
    const pkg = join(root, 'pkg');
    mkdirSync(pkg);
    writeFileSync(join(pkg, 'legion'), launcherScript());
    chmodSync(join(pkg, 'legion'), 0o755);
    writeFileSync(join(pkg, 'legion.js'), '');
    symlinkSync(join(pkg, 'legion'), join(l.bin, 'legion'));
    assert.deepEqual(launch(l, ['--help'], {}, join(l.bin, 'legion')), [join(pkg, 'legion.js'), '--help']);
  });
});
