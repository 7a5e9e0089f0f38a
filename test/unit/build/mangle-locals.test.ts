import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { build } from 'esbuild';
import { withTempDir } from '../../helpers/tmp';
// @ts-expect-error: a build script (plain JS, no types)
import { mangleLocals } from '../../../scripts/mangle-locals.mjs';
// @ts-expect-error: a build script (plain JS, no types)
import { moduleWrappers } from '../../../scripts/lazy-modules.mjs';

/**
 * The bundle's local names shortened (scripts/mangle-locals.mjs, applied by scripts/build.mjs
 * before the lazy split): parameters and local variables get short names; what code or a reader
 * sees keeps its name: top-level bindings, the modules' keys, and every function's and class's
 * `.name` and stack name, including those named by the variable that holds them.
 */

const FILES: Record<string, string> = {
  // A CommonJS module: all its code is local to its wrapper, so all of it is mangled.
  'names.cjs': `
    function declaredFunction(someLongParameter) { return someLongParameter; }
    const arrowByConst = (anotherLongParameter) => anotherLongParameter;
    let assignedLater; assignedLater = function () {};
    let assignedArrow; assignedArrow = async (x) => x;
    let assignedGenerator; assignedGenerator = function* () {};
    let arrowWithDefault; arrowWithDefault = (a = String(1), innerDefault = () => a) => innerDefault;
    const anonymousClass = class {};
    let classAssignedLater; classAssignedLater = class extends Error {};
    let orAssigned; orAssigned ||= class {};
    const namedExpression = class InnerName { static self() { return InnerName; } };
    class DeclaredClass { method() { return new Error('where').stack; } }
    const veryLongLocalVariableName = [declaredFunction, arrowByConst, assignedLater, assignedArrow, assignedGenerator, arrowWithDefault, arrowWithDefault(), anonymousClass, classAssignedLater, orAssigned, namedExpression, DeclaredClass];
    exports.names = () => veryLongLocalVariableName.map((f) => f.name);
    exports.stack = () => new DeclaredClass().method();
    exports.message = () => { const someObject = {}; try { someObject.missing(); } catch (error) { return error.message; } };
  `,
  // An ES module: esbuild hoists its declarations to the bundle's top level.
  'top.js': 'export function topLevelFunction(longParameterName) { return longParameterName * 2; }',
  'entry.js': 'import { names, stack, message } from "./names.cjs"; import { topLevelFunction } from "./top.js"; export { names, stack, message, topLevelFunction };',
};

interface Exported { names(): string[]; stack(): string; message(): string; topLevelFunction(x: number): number }

async function bundled(): Promise<string> {
  return withTempDir(async (dir) => {
    for (const [name, text] of Object.entries(FILES)) writeFileSync(join(dir, name), text);
    const result = await build({
      entryPoints: [join(dir, 'entry.js')], bundle: true, write: false, platform: 'node', format: 'cjs',
      target: 'node20', minifySyntax: true, minifyWhitespace: true, logLevel: 'silent',
    });
    return `"use strict";${result.outputFiles[0]!.text}`;
  }, 'legion-mangle-locals-');
}

const run = (text: string): Exported => {
  const module = { exports: {} as Exported };
  runInNewContext(text, { module, exports: module.exports });
  return module.exports;
};

test('locals get short names; every function\'s and class\'s name, a stack\'s names and the top level are kept', async () => {
  const text = await bundled();
  const mangled: string = mangleLocals(text);
  assert.ok(mangled.length < text.length);
  for (const local of ['someLongParameter', 'anotherLongParameter', 'veryLongLocalVariableName', 'longParameterName', 'someObject']) {
    assert.ok(text.includes(local) && !mangled.includes(local), `${local} is shortened`);
  }
  const before = run(text);
  const after = run(mangled);
  // (Arrays of another context: compared as plain values.)
  const names = (e: Exported) => [...e.names()];
  assert.deepEqual(names(before), ['declaredFunction', 'arrowByConst', 'assignedLater', 'assignedArrow', 'assignedGenerator', 'arrowWithDefault', 'innerDefault', 'anonymousClass', 'classAssignedLater', 'orAssigned', 'InnerName', 'DeclaredClass']);
  assert.deepEqual(names(after), names(before));
  assert.match(after.stack(), /at DeclaredClass\.method /);
  assert.equal(after.topLevelFunction(21), 42);
  assert.ok(mangled.includes('function topLevelFunction('), 'a top-level name is kept');
  // The modules' keys (which scripts/lazy-modules.mjs reads and a stack shows) are unchanged.
  assert.deepEqual(moduleWrappers(mangled).map((w: { key: string }) => w.key), moduleWrappers(text).map((w: { key: string }) => w.key));
  // What changes: V8's message prints the expression as written.
  assert.match(before.message(), /someObject\.missing is not a function/);
  assert.match(after.message(), /^\w+\.missing is not a function/);
});

test('the output is ASCII, as V8 keeps the bundle as one-byte text', async () => {
  const mangled: string = mangleLocals('"use strict";function f(longName){return "\\u00e9" + /\\u{1F600}/u.source + longName}');
  assert.ok(!/[^\x00-\x7f]/.test(mangled));
  assert.equal(runInNewContext(`${mangled};f("x")`), '\u00e9\\u{1F600}x');
});
