import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
// @ts-expect-error: a build script (plain JS, no types)
import { builtinsInSnapshot, codeCacheOf, withoutCodeCacheOf } from '../../../scripts/snapshot-code-cache.mjs';
// @ts-expect-error: a build script (plain JS, no types)
import { buildSnapshot, SNAPSHOT_V8_FLAGS } from '../../../scripts/snapshot.mjs';

interface Entry { id: string; from: number; to: number }
const FLAGS = SNAPSHOT_V8_FLAGS as string[];

/**
 * A snapshot whose heap holds node:zlib (loaded while it builds) and whose start loads node:dns
 * (not in it) and runs a worker thread that loads both: what each gives is printed.
 */
function buildBlob(dir: string): string {
  const entry = join(dir, 'entry.cjs');
  writeFileSync(entry, `
const zlib = require('node:zlib');
require('node:v8').startupSnapshot.setDeserializeMainFunction(() => {
  const dns = require('node:dns');
  const { Worker } = require('node:worker_threads');
  const inflated = zlib.inflateSync(zlib.deflateSync(Buffer.from('through zlib'))).toString();
  const worker = new Worker("const { parentPort } = require('node:worker_threads'); const z = require('node:zlib'); require('node:dns'); parentPort.postMessage(z.gunzipSync(z.gzipSync('in a worker')).toString())", { eval: true, env: {} });
  worker.on('message', (m) => { process.stdout.write(JSON.stringify({ inflated, lookup: typeof dns.lookup, worker: m })); worker.terminate(); });
});
`);
  const blob = join(dir, 'app.blob');
  const r = spawnSync(process.execPath, [...FLAGS, '--snapshot-blob', blob, '--build-snapshot', entry], { cwd: dir, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return blob;
}

const startFrom = (blob: string) => spawnSync(process.execPath, [...FLAGS, '--snapshot-blob', blob], { encoding: 'utf8', timeout: 30_000 });

test('snapshot code cache: the caches of the built-ins the heap holds are dropped, the others kept byte for byte, and a start still loads and runs built-ins (in a worker too)', async () => {
  await withTempDir(async (dir) => {
    const blob = buildBlob(dir);
    const bytes = readFileSync(blob);
    const { offset, entries } = codeCacheOf(bytes) as { offset: number; entries: Entry[] };
    const ids = entries.map((e) => e.id);
    assert.ok(ids.includes('zlib') && ids.includes('dns'), 'Node wrote a cache for every built-in it compiled');
    assert.equal(Number(bytes.readBigUInt64LE(offset)), entries.length);

    const loaded = builtinsInSnapshot({ node: process.execPath, flags: FLAGS, blob, temp: join(dir, 'app.blob.tmp') }) as Set<string>;
    assert.ok(loaded.has('zlib'), 'node:zlib was loaded while the snapshot built');
    assert.ok(!loaded.has('dns'), 'node:dns is loaded only by a start');

    const { blob: trimmed, dropped } = withoutCodeCacheOf(bytes, loaded) as { blob: Buffer; dropped: number };
    const inHeap = ids.filter((id) => loaded.has(id));
    assert.ok(inHeap.length > 20);
    assert.equal(dropped, inHeap.length);
    assert.ok(trimmed.length < bytes.length - 100_000, `${bytes.length} → ${trimmed.length}`);
    assert.deepEqual(trimmed.subarray(0, offset), bytes.subarray(0, offset), 'everything before the code cache unchanged');
    const after = codeCacheOf(trimmed) as { offset: number; entries: Entry[] };
    assert.equal(after.offset, offset);
    assert.deepEqual(after.entries.map((e) => e.id), ids.filter((id) => !loaded.has(id)));
    for (const e of after.entries) {
      const was = entries.find((x) => x.id === e.id)!;
      assert.deepEqual(trimmed.subarray(e.from, e.to), bytes.subarray(was.from, was.to), `${e.id}'s cache kept as written`);
    }

    const trimmedPath = join(dir, 'trimmed.blob');
    writeFileSync(trimmedPath, trimmed);
    for (const path of [blob, trimmedPath]) {
      const r = startFrom(path);
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { inflated: 'through zlib', lookup: 'function', worker: 'in a worker' }, path);
    }
  });
});

test('snapshot code cache: a blob not laid out as Node 20 writes it is refused, never rewritten', async () => {
  await withTempDir(async (dir) => {
    const bytes = readFileSync(buildBlob(dir));
    assert.throws(() => codeCacheOf(Buffer.from('not a snapshot blob, but long enough to be read as one..........')), /not a Node snapshot blob/);
    assert.throws(() => codeCacheOf(bytes.subarray(0, bytes.length - 1)), /no code cache/, 'truncated');
    assert.throws(() => codeCacheOf(Buffer.concat([bytes, Buffer.from([0])])), /no code cache/, 'a byte after the last cache');
    const wrongCount = Buffer.from(bytes);
    const { offset } = codeCacheOf(bytes) as { offset: number };
    wrongCount.writeBigUInt64LE(wrongCount.readBigUInt64LE(offset) + 1n, offset);
    assert.throws(() => withoutCodeCacheOf(wrongCount, new Set(['zlib'])), /no code cache/, 'a count the entries do not match');
  });
});

test('snapshot code cache: the build\'s blob (buildSnapshot) carries no cache of a built-in its heap holds, and starts', async () => {
  await withTempDir(async (dir) => {
    const app = join(dir, 'app.cjs');
    // The bundle's shape as scripts/snapshot-entry.cjs evaluates it (see snapshot-build.test.ts).
    writeFileSync(app, `(function (exports, require, module, __filename, __dirname, __legionImportMetaUrl, __legionStart) {
  var init = { "src/fake.ts"() { globalThis.zlib = require('node:zlib'); } }["src/fake.ts"];
  init();
  __legionStart.snapshot(() => { process.stdout.write(globalThis.zlib.inflateSync(globalThis.zlib.deflateSync('ok')).toString()); }, async () => {});
})`);
    const blob = join(dir, 'app.blob');
    buildSnapshot({ app, loader: join(dir, 'legion.js'), blob });
    const ids = (codeCacheOf(readFileSync(blob)) as { entries: Entry[] }).entries.map((e) => e.id);
    assert.ok(ids.includes('dns'), 'a built-in no start has loaded keeps its cache');
    for (const inHeap of ['zlib', 'fs', 'path', 'vm']) assert.ok(!ids.includes(inHeap), `${inHeap} is in the heap: no cache`);
    const r = startFrom(blob);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, 'ok');
  });
});
