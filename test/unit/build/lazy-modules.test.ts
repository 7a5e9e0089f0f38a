import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { build } from 'esbuild';
import { withTempDir } from '../../helpers/tmp';
// @ts-expect-error: a build script (plain JS, no types)
import { moduleWrappers, splitLazyModules } from '../../../scripts/lazy-modules.mjs';

/**
 * The bodies of modules a start does not evaluate, moved out of the bundle's source
 * (scripts/lazy-modules.mjs, applied by scripts/build.mjs): a moved module, evaluated at its
 * first import, sees the bundle's bindings (live, and not hidden by the loader's own names),
 * runs once, fails as it did inline, names itself in a stack, and is read through the
 * descriptor the bundle opened as it started (a later build may remove the file), and only if
 * its bytes are the ones the build wrote (the file may lie where an agent can write, and it is
 * read while the process runs: an altered body must never run).
 */

const FILES: Record<string, string> = {
  // Names the loader's function uses (i, fn, self, args, bytes, from): the moved code must see the bundle's.
  'state.js': 'export let count = 0; export const bump = () => count++; export const i = "bundle i", fn = "bundle fn", self = "bundle self", args = "bundle args", bytes = "bundle bytes", from = "bundle from";',
  'lazy.js': 'import { count, bump, i, fn, self, args, bytes, from } from "./state.js"; bump(); export const seen = [count, i, fn, self, args, bytes, from]; export const where = () => new Error("here").stack; export const evaluations = (globalThis.__lazyEvaluations = (globalThis.__lazyEvaluations ?? 0) + 1);',
  'boom.js': 'import { bump } from "./state.js"; bump(); if (globalThis.__boom !== false) throw new Error("boom at load"); export const ok = true;',
  // Long enough for an attacker's code to replace it at the same length.
  'victim.js': `export const victim = "${'the build\'s own code '.repeat(12)}";`,
  'legacy.cjs': 'module.exports = { twice: (x) => x * Number(process.env.LAZY_TEST_FACTOR ?? 2) };',
  'entry.js': '"use strict"; import { count } from "./state.js"; export const current = () => count; export const load = () => import("./lazy.js"); export const loadBoom = () => import("./boom.js"); export const loadVictim = () => import("./victim.js"); export const legacy = (x) => require("./legacy.cjs").twice(x);',
};

interface Bundle {
  current(): number;
  load(): Promise<{ seen: unknown[]; where(): string; evaluations: number }>;
  loadBoom(): Promise<unknown>;
  loadVictim(): Promise<{ victim: string }>;
  legacy(x: number): number;
}

/** Bundle FILES as scripts/build.mjs does, move every module but `entry.js` and `state.js` out, write both parts to `dir`; `run()` starts the bundle. */
async function splitBundle(dir: string) {
  for (const [name, text] of Object.entries(FILES)) writeFileSync(join(dir, name), text);
  const result = await build({
    entryPoints: [join(dir, 'entry.js')], bundle: true, write: false, platform: 'node', format: 'cjs',
    target: 'node20', minifySyntax: true, minifyWhitespace: true, logLevel: 'silent',
  });
  const text = result.outputFiles[0]!.text;
  const wrappers: Array<{ key: string }> = moduleWrappers(text);
  const inline = new Set(wrappers.map((w) => w.key).filter((k) => /(entry|state)\.js$/.test(k)));
  const split = splitLazyModules(text, wrappers, inline);
  writeFileSync(join(dir, split.name), split.lazy);
  const app = join(dir, 'app.cjs');
  writeFileSync(app, `(function (exports, require, module, __filename, __dirname, __legionImportMetaUrl, __legionStart) {${split.main}\n})`);
  const loaded: string[] = [];
  const run = (): Bundle => {
    const module = { exports: {} as Bundle };
    const wrapper = new Script(`(function (exports, require, module, __filename, __dirname, __legionImportMetaUrl, __legionStart) {${split.main}\n})`, { filename: app }).runInThisContext();
    wrapper(module.exports, createRequire(app), module, app, dir, `file://${app}`, { lazyLoaded: (index: number) => loaded.push(split.moved[index]) });
    return module.exports;
  };
  return { split, text, run, loaded, lazyPath: join(dir, split.name) };
}

test('a moved module sees the bundle\'s bindings live, not the loader\'s names, and is evaluated once', async () => {
  await withTempDir(async (dir) => {
    const { split, text, run, loaded } = await splitBundle(dir);
    assert.deepEqual([...split.moved].map((k: string) => k.replace(/^.*\//, '')).sort(), ['boom.js', 'lazy.js', 'legacy.cjs', 'victim.js']);
    assert.ok(text.includes('boom at load') && !split.main.includes('boom at load'), 'the moved body is not in the bundle\'s source');
    assert.ok(split.lazy.includes('boom at load'));
    // Each moved module's wrapper keeps no object literal of its own in the bundle (its key, a
    // method: heap objects a start deserializes), only the one shared stand-in's call.
    for (const key of split.moved) assert.ok(!split.main.includes(JSON.stringify(key)), `${key}: its wrapper's key is not in the bundle's source`);
    assert.equal(split.main.match(/__legionLazyModule\(\d+\)/g)?.length, split.moved.length);
    const app = run();
    assert.equal(loaded.length, 0, 'nothing read before a moved module is imported');
    assert.equal(app.current(), 0);
    const lazy = await app.load();
    assert.deepEqual(lazy.seen, [1, 'bundle i', 'bundle fn', 'bundle self', 'bundle args', 'bundle bytes', 'bundle from']);
    assert.equal(app.current(), 1, 'the moved module changed the bundle\'s binding');
    const again = await app.load();
    assert.equal(again, lazy);
    assert.equal(lazy.evaluations, 1);
    assert.match(lazy.where(), /legion-lazy:\S*lazy\.js/, 'a stack names the moved module');
    assert.equal(app.legacy(21), 42, 'a CommonJS module required from a function');
    assert.deepEqual([...loaded].map((k: string) => k.replace(/^.*\//, '')), ['lazy.js', 'legacy.cjs'], 'the hook heard each read, once');
  }, 'legion-lazy-modules-');
});

test('a moved module that throws as it loads fails every import with its error, as inline', async () => {
  await withTempDir(async (dir) => {
    const { run } = await splitBundle(dir);
    const app = run();
    await assert.rejects(app.loadBoom(), /boom at load/);
    await assert.rejects(app.loadBoom(), /boom at load/);
    assert.equal(app.current(), 1, 'evaluated once');
  }, 'legion-lazy-modules-');
});

test('the bundle opens the lazy file as it starts: a moved module loads after the file was removed', async () => {
  await withTempDir(async (dir) => {
    const { run, lazyPath } = await splitBundle(dir);
    const app = run();
    unlinkSync(lazyPath);
    assert.equal((await app.load()).seen[0], 1);
    // A bundle started after the removal has no file to read: it fails at its start, not at a later import.
    assert.throws(() => run(), /ENOENT/);
  }, 'legion-lazy-modules-');
});

test('the split refuses a bundle that is not strict code (its eval would add names to the bundle\'s scope)', async () => {
  await withTempDir(async (dir) => {
    const { text } = await splitBundle(dir);
    const sloppy = text.replace(/^"use strict";/, '');
    assert.throws(() => splitLazyModules(sloppy, moduleWrappers(sloppy), new Set()), /use strict/);
  }, 'legion-lazy-modules-');
});

// --- an altered file (the attacker controls what an agent runs, and dist/ may be in its workspace) ---

const sha256 = (text: string): string => createHash('sha256').update(text, 'latin1').digest('hex');
const CHANGED = /legion-lazy-[0-9a-f]{16}\.js was changed after the build: reinstall Legion/;

/**
 * The lazy file with victim.js's text replaced by code that writes `marker` when evaluated, at
 * the same length (so the module's byte range holds the attacker's code); `extra` bytes after
 * it make the file longer. `table`: the attacker also writes the new text's sha256 where the
 * file holds the old one.
 */
function hostile(split: { lazy: string; moved: string[]; at: number[] }, marker: string, { extra = '', table = false } = {}) {
  const i = split.moved.findIndex((k) => k.endsWith('victim.js'));
  const [from, to] = [split.at[i]!, split.at[i + 1]!];
  const original = split.lazy.slice(from, to);
  const code = `(function(){require("node:fs").writeFileSync(${JSON.stringify(marker)},"the altered code ran")})`;
  assert.ok(code.length < original.length, 'the victim is long enough for the payload');
  const altered = code.padEnd(original.length, ' ');
  let lazy = split.lazy.slice(0, from) + altered + extra + split.lazy.slice(to);
  if (table) {
    assert.ok(lazy.includes(sha256(original)), 'the file holds the module\'s sha256 as hex');
    lazy = lazy.replace(sha256(original), sha256(altered));
  }
  return { lazy, from, altered };
}

/** Overwrite `path` in place (same inode, same length, no truncation), from byte 0. */
function writeInPlace(path: string, text: string): void {
  const fd = openSync(path, 'r+');
  try {
    writeSync(fd, Buffer.from(text, 'latin1'), 0, text.length, 0);
  } finally {
    closeSync(fd);
  }
}

for (const attack of [
  { name: 'in place at the same length', write: (path: string, lazy: string) => writeInPlace(path, lazy), extra: '' },
  { name: 'in place, longer (more code after the module\'s range)', write: (path: string, lazy: string) => writeInPlace(path, lazy), extra: ';require("node:fs").writeFileSync("/dev/null","more")\n' },
  { name: 'truncated and rewritten, same inode (a shell\'s `>`)', write: (path: string, lazy: string) => writeFileSync(path, lazy, 'latin1'), extra: '' },
]) {
  test(`a moved module whose text was altered ${attack.name} after the start fails with a clear error and its code never runs`, async () => {
    await withTempDir(async (dir) => {
      const { split, run, lazyPath } = await splitBundle(dir);
      const marker = join(dir, 'marker');
      const app = run();
      const inode = statSync(lazyPath).ino;
      const { lazy } = hostile(split, marker, { extra: attack.extra });
      attack.write(lazyPath, lazy);
      assert.equal(statSync(lazyPath).ino, inode, 'the file the bundle opened');
      assert.equal(statSync(lazyPath).size, split.lazy.length + attack.extra.length);
      await assert.rejects(app.loadVictim(), (error: Error) => error.message.includes(lazyPath) && CHANGED.test(error.message));
      assert.equal(existsSync(marker), false, 'the altered code did not run');
      // The modules the file still holds as built load (each is checked on its own).
      assert.equal((await app.load()).seen[0], 1);
      assert.equal(existsSync(marker), false);
    }, 'legion-lazy-modules-');
  });
}

test('an altered module with its sha256 rewritten in the file fails too: the file\'s table of hashes is checked against the bundle', async () => {
  await withTempDir(async (dir) => {
    const { split, run, lazyPath } = await splitBundle(dir);
    const marker = join(dir, 'marker');
    const app = run();
    writeFileSync(lazyPath, hostile(split, marker, { table: true }).lazy, 'latin1');
    await assert.rejects(app.loadVictim(), CHANGED);
    await assert.rejects(app.load(), CHANGED, 'no module is read from a file whose table is not the build\'s');
    assert.equal(existsSync(marker), false, 'the altered code did not run');
  }, 'legion-lazy-modules-');
});

test('after a first lazy load (the table checked and kept), a module altered with its table entry rewritten fails; it keeps its error, a new start loads the file put back', async () => {
  await withTempDir(async (dir) => {
    const { split, run, lazyPath } = await splitBundle(dir);
    const marker = join(dir, 'marker');
    const app = run();
    assert.equal((await app.load()).seen[0], 1, 'the first lazy load: the table is checked and kept');
    writeInPlace(lazyPath, hostile(split, marker, { table: true }).lazy);
    await assert.rejects(app.loadVictim(), CHANGED);
    assert.equal(existsSync(marker), false, 'the altered code did not run');
    // Put back as built: the module keeps its error, as a module that threw inline does; a new start loads it.
    writeInPlace(lazyPath, split.lazy);
    await assert.rejects(app.loadVictim(), CHANGED);
    assert.match((await run().loadVictim()).victim, /the build's own code/);
    assert.equal(existsSync(marker), false);
  }, 'legion-lazy-modules-');
});

test('a bundle started on an altered file fails at its first lazy load, not before, and the altered code never runs', async () => {
  await withTempDir(async (dir) => {
    const { split, run, lazyPath } = await splitBundle(dir);
    const marker = join(dir, 'marker');
    writeFileSync(lazyPath, hostile(split, marker).lazy, 'latin1');
    const app = run();
    assert.equal(app.current(), 0, 'the start does not read the file');
    await assert.rejects(app.loadVictim(), CHANGED);
    assert.equal(existsSync(marker), false);
    assert.equal(readFileSync(lazyPath, 'latin1').length, split.lazy.length);
  }, 'legion-lazy-modules-');
});

test('without crypto.hash (Node before 20.12) the check is made with a Hash object: an altered module fails, the others load', async () => {
  const crypto = createRequire(import.meta.url)('node:crypto') as { hash?: unknown };
  const hash = crypto.hash;
  crypto.hash = undefined;
  try {
    await withTempDir(async (dir) => {
      const { split, run, lazyPath } = await splitBundle(dir);
      const marker = join(dir, 'marker');
      const app = run();
      writeInPlace(lazyPath, hostile(split, marker).lazy);
      await assert.rejects(app.loadVictim(), CHANGED);
      assert.equal(existsSync(marker), false, 'the altered code did not run');
      assert.equal((await app.load()).seen[0], 1);
    }, 'legion-lazy-modules-');
  } finally {
    crypto.hash = hash;
  }
});
