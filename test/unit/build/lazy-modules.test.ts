import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unlinkSync, writeFileSync } from 'node:fs';
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
 * descriptor the bundle opened as it started (a later build may remove the file).
 */

const FILES: Record<string, string> = {
  // Names the loader's function uses (i, fn, self, args, bytes, from): the moved code must see the bundle's.
  'state.js': 'export let count = 0; export const bump = () => count++; export const i = "bundle i", fn = "bundle fn", self = "bundle self", args = "bundle args", bytes = "bundle bytes", from = "bundle from";',
  'lazy.js': 'import { count, bump, i, fn, self, args, bytes, from } from "./state.js"; bump(); export const seen = [count, i, fn, self, args, bytes, from]; export const where = () => new Error("here").stack; export const evaluations = (globalThis.__lazyEvaluations = (globalThis.__lazyEvaluations ?? 0) + 1);',
  'boom.js': 'import { bump } from "./state.js"; bump(); if (globalThis.__boom !== false) throw new Error("boom at load"); export const ok = true;',
  'legacy.cjs': 'module.exports = { twice: (x) => x * Number(process.env.LAZY_TEST_FACTOR ?? 2) };',
  'entry.js': '"use strict"; import { count } from "./state.js"; export const current = () => count; export const load = () => import("./lazy.js"); export const loadBoom = () => import("./boom.js"); export const legacy = (x) => require("./legacy.cjs").twice(x);',
};

interface Bundle {
  current(): number;
  load(): Promise<{ seen: unknown[]; where(): string; evaluations: number }>;
  loadBoom(): Promise<unknown>;
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
    assert.deepEqual([...split.moved].map((k: string) => k.replace(/^.*\//, '')).sort(), ['boom.js', 'lazy.js', 'legacy.cjs']);
    assert.ok(text.includes('boom at load') && !split.main.includes('boom at load'), 'the moved body is not in the bundle\'s source');
    assert.ok(split.lazy.includes('boom at load'));
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
