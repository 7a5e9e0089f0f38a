import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { build } from 'esbuild';
import { withTempDir } from '../../helpers/tmp';
// @ts-expect-error: a build script (plain JS, no types)
import { shareInteropCopies } from '../../../scripts/esm-interop.mjs';

/**
 * The bundle's `__toESM` (scripts/esm-interop.mjs, applied by scripts/build.mjs): importers of
 * one CommonJS module share one interop copy, which reads the module's exports live, and a copy
 * made while the module was still evaluating (a require cycle) is not handed to later importers.
 */

interface Seen { [name: string]: unknown }

/** Bundle `files` (entry `entry.js`) as scripts/build.mjs does, optionally with the shared helper, and run it; returns what the entry exports. */
async function bundleAndRun(files: Record<string, string>, share: boolean): Promise<Seen> {
  return withTempDir(async (dir) => {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const result = await build({
      entryPoints: [join(dir, 'entry.js')], bundle: true, write: false, platform: 'node', format: 'cjs',
      target: 'node20', minifySyntax: true, minifyWhitespace: true, logLevel: 'silent',
    });
    const text = result.outputFiles[0]!.text;
    const module = { exports: {} as Seen };
    runInNewContext(share ? shareInteropCopies(text) : text, { module, exports: module.exports, process });
    return module.exports;
  }, 'legion-esm-interop-');
}

const FILES: Record<string, string> = {
  // A CommonJS module, imported by default and as a namespace from two ES modules each.
  'dep.cjs': 'exports.value = 1; exports.bump = () => { exports.value++; };',
  // One that says it is an ES module compiled to CommonJS: no `default` is added for it.
  'esm-dep.cjs': 'Object.defineProperty(exports, "__esModule", { value: true }); exports.default = "the default"; exports.named = 2;',
  'a.js': 'import dep from "./dep.cjs"; import * as ns from "./dep.cjs"; import esm from "./esm-dep.cjs"; export { dep, ns, esm };',
  'b.js': 'import dep from "./dep.cjs"; import * as ns from "./dep.cjs"; import * as esmNs from "./esm-dep.cjs"; export { dep, ns, esmNs };',
  'entry.js': 'import * as a from "./a.js"; import * as b from "./b.js"; export { a, b };',
};

test('esm interop: the importers of a CommonJS module share one copy, whose exports read the module live', async () => {
  const plain = await bundleAndRun(FILES, false);
  const shared = await bundleAndRun(FILES, true);
  for (const out of [plain, shared]) {
    const { a, b } = out as { a: Seen; b: Seen };
    assert.equal((a.ns as Seen).value, 1);
    ((a.dep as Seen).bump as () => void)();
    assert.equal((b.ns as Seen).value, 2, 'the copy reads the module\'s exports live');
    assert.equal(a.esm, 'the default', 'a module with __esModule keeps its own default');
    assert.deepEqual(Object.keys(b.esmNs as Seen).sort(), ['default', 'named']);
  }
  const { a, b } = shared as { a: Seen; b: Seen };
  // esbuild reads a namespace import through the copy itself (`ns`), a default one as its `default`.
  assert.equal(a.ns, b.ns, 'one copy for both importers');
  const plainOut = plain as { a: Seen; b: Seen };
  assert.notEqual(plainOut.a.ns, plainOut.b.ns, 'esbuild\'s own helper makes one per importer (the test sees the difference)');
});

test('esm interop: a copy made while the module was still evaluating (a require cycle) is made again once its exports grew', async () => {
  const files: Record<string, string> = {
    // cyc.cjs requires early.js before it sets `late`: early.js's copy sees only `early`.
    'cyc.cjs': 'exports.early = 1; require("./early.js"); exports.late = 2;',
    'early.js': 'import * as ns from "./cyc.cjs"; export const seenEarly = ns;',
    'later.js': 'import * as ns from "./cyc.cjs"; export const seenLater = ns;',
    'entry.js': 'import * as cyc from "./cyc.cjs"; import { seenEarly } from "./early.js"; import { seenLater } from "./later.js"; export { cyc, seenEarly, seenLater };',
  };
  const out = await bundleAndRun(files, true) as { seenEarly: Seen; seenLater: Seen };
  assert.equal(out.seenEarly.late, undefined, 'the importer inside the cycle copied the exports of then (as with esbuild\'s own helper)');
  assert.equal(out.seenLater.late, 2, 'a later importer sees every export');
  assert.equal(out.seenLater.early, 1);
});

test('esm interop: the build refuses an esbuild whose helper reads otherwise', () => {
  assert.throws(() => shareInteropCopies('var __toESM=(mod)=>mod;'), /__toESM helper is not printed/);
  const helper = 'var __toESM=(mod,isNodeMode,target)=>(target=mod!=null?__create(__getProtoOf(mod)):{},__copyProps(isNodeMode||!mod||!mod.__esModule?__defProp(target,"default",{value:mod,enumerable:!0}):target,mod));';
  assert.throws(() => shareInteropCopies(helper + helper), /once/);
});
