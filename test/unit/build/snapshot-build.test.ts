import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
// @ts-expect-error: a build script (plain JS, no types)
import { buildSnapshot, stampOf, SNAPSHOT_V8_FLAGS } from '../../../scripts/snapshot.mjs';

/** How the launcher starts node from a blob (scripts/snapshot.mjs). */
const fromBlob = (blob: string): string[] => [...(SNAPSHOT_V8_FLAGS as string[]), '--snapshot-blob', blob, '--'];

/**
 * The start-up snapshot builder (scripts/snapshot-entry.cjs through scripts/snapshot.mjs) on a
 * stand-in bundle in the real bundle's shape: the wrapper the loader compiles, one module
 * (named after its path, as esbuild names module functions) evaluating `body`, and the hand-over
 * of bin/legion.ts (`__legionStart.snapshot`). Its start prints what it sees.
 */
function fakeApp(dir: string, body: string, report = 'globalThis.baked', preload = 'globalThis.preloaded = true;'): string {
  const app = join(dir, 'app.cjs');
  writeFileSync(app, `(function (exports, require, module, __filename, __dirname, __legionImportMetaUrl, __legionStart) {
  var init = { "src/fake.ts"() { ${body} } }["src/fake.ts"];
  init();
  const run = () => {
    const crypto = require('node:crypto');
    process.stdout.write(JSON.stringify({
      argv: process.argv, execArgv: process.execArgv, cwd: process.cwd(), probe: process.env.PROBE,
      random: Math.random(), uuid: crypto.randomUUID(), bytes: crypto.randomBytes(8).toString('hex'), now: Date.now(),
      baked: ${report},
    }));
  };
  __legionStart.snapshot(run, async () => { ${preload} });
})`);
  return app;
}

interface Seen { argv: string[]; execArgv: string[]; cwd: string; probe?: string; random: number; uuid: string; bytes: string; now: number; baked?: unknown }

test('snapshot: a start from it runs the app with the start\'s own argv, environment, directory, clock and randomness', async () => {
  await withTempDir(async (dir) => {
    const app = fakeApp(dir, 'globalThis.baked = [1, 2, 3].map((n) => n * 2);');
    const blob = join(dir, 'app.blob');
    buildSnapshot({ app, loader: join(dir, 'legion.js'), blob });
    assert.ok(existsSync(blob) && existsSync(stampOf(blob)));
    assert.deepEqual(readdirSync(dir).filter((n) => n.endsWith('.tmp')), [], 'no temp file left');
    const start = (args: string[]): Seen => {
      const r = spawnSync(process.execPath, [...fromBlob(blob), ...args], { cwd: dir, encoding: 'utf8', env: { PROBE: 'from the start' } });
      assert.equal(r.status, 0, r.stderr);
      return JSON.parse(r.stdout) as Seen;
    };
    const before = Date.now();
    const one = start(['a', '--b']);
    const two = start(['a', '--b']);
    assert.deepEqual(one.baked, [2, 4, 6], 'what the module computed is in the snapshot');
    assert.deepEqual(one.argv, [process.execPath, join(dir, 'legion.js'), 'a', '--b'], 'argv as a plain start has it');
    assert.deepEqual(one.execArgv, [], 'no snapshot flags (the blob, the builder\'s V8 flags) for children the app starts');
    assert.equal(one.cwd, dir);
    assert.equal(one.probe, 'from the start');
    assert.notEqual(one.random, two.random, 'Math.random is seeded at each start');
    assert.notEqual(one.uuid, two.uuid, 'crypto.randomUUID differs between starts');
    assert.notEqual(one.bytes, two.bytes, 'crypto.randomBytes differs between starts');
    assert.ok(one.now >= before - 1000 && two.now <= Date.now() + 1000, 'the clock is the start\'s');
  });
});

test('snapshot: the build fails, leaving no blob, when a module reads the build machine\'s state while it evaluates', async () => {
  const reads: [string, RegExp][] = [
    ['globalThis.token = process.env.SECRET_TOKEN;', /env SECRET_TOKEN \(at src\/fake\.ts\)/],
    ["globalThis.has = 'HOME' in process.env;", /env has HOME/],
    ['globalThis.seed = Math.random();', /Math\.random/],
    ["globalThis.id = require('node:crypto').randomUUID();", /crypto\.randomUUID/],
    ["globalThis.key = require('node:crypto').randomBytes(16);", /crypto\.randomBytes/],
    ['globalThis.key = crypto.getRandomValues(new Uint8Array(4));', /crypto\.getRandomValues/],
    ['globalThis.t = Date.now();', /Date\.now/],
    ['globalThis.t = new Date();', /new Date\(\)/],
    ['globalThis.dir = process.cwd();', /cwd\(\)/],
    ["globalThis.home = require('node:os').homedir();", /os\.homedir/],
    ["globalThis.tty = require('node:tty').isatty(1);", /tty\.isatty/],
    ['globalThis.args = process.argv.slice(2);', /process\.argv/],
    ["globalThis.conf = require('node:fs').existsSync('/etc/hostname');", /fs\.existsSync/],
  ];
  await withTempDir(async (dir) => {
    for (const [body, error] of reads) {
      const app = fakeApp(dir, body);
      const blob = join(dir, 'app.blob');
      assert.throws(() => buildSnapshot({ app, loader: join(dir, 'legion.js'), blob }), error, body);
      assert.deepEqual(readdirSync(dir).filter((n) => n !== 'app.cjs'), [], `${body}: no blob, no stamp, no temp file`);
    }
  });
});

test('snapshot: node:http, which Node 20 cannot snapshot, is a stand-in loaded at its first use; using it at load fails the build', async () => {
  await withTempDir(async (dir) => {
    const lazy = `var http = require('node:http'), https = require('node:https'), h2 = require('node:http2');
      var copied = Object.keys(http).includes('request');
      globalThis.later = () => [typeof http.request, typeof new https.Agent({}).destroy, typeof h2.connect, copied].join(' ');`;
    const app = fakeApp(dir, lazy, 'globalThis.later()');
    const blob = join(dir, 'app.blob');
    buildSnapshot({ app, loader: join(dir, 'legion.js'), blob });
    const started = spawnSync(process.execPath, fromBlob(blob), { encoding: 'utf8' });
    assert.equal(started.status, 0, started.stderr);
    assert.equal((JSON.parse(started.stdout) as Seen).baked, 'function function function true');
    rmSync(blob);
    rmSync(stampOf(blob));
    for (const use of ["new (require('node:http').Agent)();", "require('node:https').request;", "require('node:http2').constants;"]) {
      fakeApp(dir, use);
      assert.throws(() => buildSnapshot({ app, loader: join(dir, 'legion.js'), blob }), /cannot be in a start snapshot .*src\/fake\.ts/, use);
    }
  });
});

test('snapshot: the build fails when a start from the new blob fails (a V8 flag changed while the bundle evaluated), leaving no blob', async () => {
  await withTempDir(async (dir) => {
    const app = fakeApp(dir, "require('node:v8').setFlagsFromString('--semi-space-growth-factor=4');");
    const blob = join(dir, 'app.blob');
    assert.throws(() => buildSnapshot({ app, loader: join(dir, 'legion.js'), blob }), /a start from the new start-up snapshot failed \(exit 14\)/);
    assert.deepEqual(readdirSync(dir), ['app.cjs']);
  });
});

test('snapshot: reading at first use (after the snapshot is deserialized) is fine', async () => {
  await withTempDir(async (dir) => {
    const app = fakeApp(dir, 'globalThis.later = () => process.env.SECRET_TOKEN + Math.random() + Date.now();');
    const blob = join(dir, 'app.blob');
    buildSnapshot({ app, loader: join(dir, 'legion.js'), blob });
    assert.ok(existsSync(blob));
  });
});

test('snapshot: a start that adds to a large deserialized heap runs no full garbage collection before it is done (V8 flags of the snapshot)', async () => {
  await withTempDir(async (dir) => {
    // ~15 MB of old generation in the snapshot, as the app's modules are; the start then keeps
    // a few MB and makes garbage, as composing and the first frame do. With V8's default, its
    // first scavenges lower the old generation's limit to about the deserialized size, and a
    // full mark-compact follows.
    const app = join(dir, 'app.cjs');
    writeFileSync(app, `(function (exports, require, module, __filename, __dirname, __legionImportMetaUrl, __legionStart) {
  globalThis.kept = Array.from({ length: 150000 }, (_, i) => ({ i, s: 'x' + i, a: [i, i + 1] }));
  const run = () => {
    const { PerformanceObserver, constants } = require('node:perf_hooks');
    let major = 0;
    const seen = new PerformanceObserver((list) => { for (const e of list.getEntries()) if (e.detail && e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR) major++; });
    seen.observe({ entryTypes: ['gc'] });
    const more = [];
    for (let r = 0; r < 30; r++) { more.push(Array.from({ length: 5000 }, (_, i) => ({ r, i, s: 'y' + i }))); for (let k = 0; k < 20000; k++) globalThis.sink = { k }; }
    setTimeout(() => { seen.disconnect(); process.stdout.write(JSON.stringify({ major, kept: more.length })); }, 50);
  };
  __legionStart.snapshot(run, async () => undefined);
})`);
    const blob = join(dir, 'app.blob');
    buildSnapshot({ app, loader: join(dir, 'legion.js'), blob });
    for (let i = 0; i < 2; i++) {
      const r = spawnSync(process.execPath, fromBlob(blob), { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { major: 0, kept: 30 });
    }
  });
});

test('snapshot: throwaway work (the warm-up composition) may not take a UUID from Node\'s entropy cache, which the snapshot would keep for every start', async () => {
  await withTempDir(async (dir) => {
    const blob = join(dir, 'app.blob');
    for (const take of ["require('node:crypto').randomUUID()", 'crypto.randomUUID()']) {
      const app = fakeApp(dir, '', 'globalThis.baked', `await __legionStart.throwaway(async () => ${take});`);
      assert.throws(() => buildSnapshot({ app, loader: join(dir, 'legion.js'), blob }), /crypto\.randomUUID/, take);
      assert.deepEqual(readdirSync(dir), ['app.cjs'], `${take}: no blob`);
    }
    // Without the cache nothing is kept: the starts' UUIDs differ.
    const app = fakeApp(dir, '', 'globalThis.baked', "await __legionStart.throwaway(async () => require('node:crypto').randomUUID({ disableEntropyCache: true }));");
    buildSnapshot({ app, loader: join(dir, 'legion.js'), blob });
    const uuids = [0, 1].map(() => (JSON.parse(spawnSync(process.execPath, fromBlob(blob), { cwd: dir, encoding: 'utf8' }).stdout) as Seen).uuid);
    assert.notEqual(uuids[0], uuids[1]);
  });
});
