// The code of modules a start never evaluates, out of the bundle's source
// (docs/performance.md#the-start-up-snapshot). Used by scripts/build.mjs on the bundle's text.
//
// esbuild wraps each bundled module in a function that runs at its first import: `__esm({"path"()
// {…}})` for an ES module, `__commonJS({"path"(exports, module) {…}})` for a CommonJS one. The
// start-up snapshot keeps the whole source of the bundle (V8 compiles a function from it when it
// first runs), and every start deserializes and checksums it (~2.3 ms of CPU per MB, loaded):
// half of it was the bodies of modules a start never evaluates (the provider SDKs, the MCP SDK,
// ajv, highlight.js, Restate, the commands other than the TUI…). Those bodies go to a second
// file, dist/legion-lazy-<hash>.js; in the bundle, each keeps its wrapper, whose body becomes a
// call that reads the body from that file and compiles it at the first evaluation, by a direct
// `eval` inside the bundle's scope: the module's code sees the bundle's variables (the other
// modules' bindings) as it did inline. The bundle is strict code, so the eval is strict: it adds
// no variable to any scope and the compiled code reads outer variables as inline code does.
//
// Which modules stay inline: those a start evaluates, as the snapshot builder evaluates them
// (scripts/snapshot-entry.cjs, which reports the modules it read from the file). The build
// first makes a bundle with every body out, lists what the builder reads, then the real one
// with those inline; the builder of the real snapshot must read none (the plain bundle, through
// V8's code cache, then starts with no module compiled outside the cache).
//
// The file is opened when the bundle starts (as it evaluates, or once a snapshot is
// deserialized), and read through that descriptor: a build that later removes it (an hour after
// a newer build, scripts/build.mjs) does not break a process still running.
//
// Only the bytes the build wrote are evaluated. The file may lie where an agent can write
// (Legion run on its own repository, or installed as a project's dependency), and it is read
// while the process runs, possibly hours after the start: a write to it (in place, or `>` on the
// same inode, which the open descriptor sees) must not reach the running process, which holds
// the user's API keys. The file starts with a table, the sha256 of each module's text; the
// bundle holds the table's sha256. The first lazy load reads the table, checks it and keeps it;
// each module's text, once read into memory, is checked against its entry before it is compiled.
// A mismatch throws an error naming the file (reinstall Legion) and evaluates nothing. The cost
// is at the first lazy load, not at the start: node:crypto is required there (a start has loaded
// it already: a cache hit), the table is ~48 kB for ~750 modules, and sha256 runs on the bytes
// a load reads anyway (docs/performance.md#the-start-up-snapshot).
import { createHash } from 'node:crypto';
import * as acorn from 'acorn';

/** The file name of a lazy part (content-addressed, like the bundle). */
export const lazyModulesName = (text) => `legion-lazy-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.js`;

/**
 * The module wrappers at the top level of esbuild's bundle text: `{ key, start, bodyStart, end,
 * objectStart, objectEnd }` per `__esm`/`__commonJS` call (`start`..`end` its one method,
 * `bodyStart` its `{`, `objectStart`..`objectEnd` the object literal that holds it).
 */
export function moduleWrappers(text) {
  const ast = acorn.parse(text, { ecmaVersion: 'latest', sourceType: 'script' });
  const wrappers = [];
  for (const statement of ast.body) {
    if (statement.type !== 'VariableDeclaration') continue;
    for (const { init } of statement.declarations) {
      if (init?.type !== 'CallExpression' || init.callee.type !== 'Identifier' || !['__esm', '__commonJS'].includes(init.callee.name)) continue;
      const [object] = init.arguments;
      if (init.arguments.length !== 1 || object.type !== 'ObjectExpression' || object.properties.length !== 1) {
        throw new Error(`build: a ${init.callee.name} call at ${init.start} is not the one-method object scripts/lazy-modules.mjs expects`);
      }
      const [method] = object.properties;
      if (method.type !== 'Property' || !method.method || method.computed || method.value.generator) {
        throw new Error(`build: the ${init.callee.name} call at ${init.start} does not hold a plain method (scripts/lazy-modules.mjs)`);
      }
      const key = method.key.type === 'Literal' ? String(method.key.value) : method.key.name;
      wrappers.push({ key, start: method.start, bodyStart: method.value.body.start, end: method.end, objectStart: object.start, objectEnd: object.end });
    }
  }
  if (wrappers.length === 0) throw new Error('build: no __esm/__commonJS module wrapper found in the bundle (scripts/lazy-modules.mjs)');
  return wrappers;
}

/** The hex sha256 of an ASCII text (the loader hashes the bytes it read, latin1). */
const sha256 = (text) => createHash('sha256').update(text, 'latin1').digest('hex');

/** How the lazy part starts: its table of hashes follows (64 hex digits a module, in order), then a newline. */
const TABLE_PREFIX = '// sha256 of each module\'s text below, in order (scripts/lazy-modules.mjs): ';

/** What the bundle's text starts with (esbuild's CommonJS output of strict code), after which the loader goes. */
const STRICT = '"use strict";';

/**
 * The bundle's text with the bodies of the wrappers whose key is not in `inline` moved to a
 * lazy part: `{ main, lazy, name, moved, at }` (`name`: the lazy part's file name, beside the
 * bundle; `moved`: the keys moved, by index; module `i`'s text is `lazy.slice(at[i], at[i + 1])`,
 * after the table of hashes). `wrappers`: moduleWrappers(text).
 */
export function splitLazyModules(text, wrappers, inline) {
  if (!text.startsWith(STRICT)) throw new Error('build: the bundle does not start with "use strict"; (scripts/lazy-modules.mjs: the lazy modules\' eval must be strict)');
  const moved = wrappers.filter((w) => !inline.has(w.key));
  const parts = [];
  const offsets = [0];
  let size = 0;
  for (const w of moved) {
    // The method as it was (its name, so a stack names the module; its parameters), and a
    // sourceURL so a stack names where its code came from.
    const part = `({${text.slice(w.start, w.end)}})[${JSON.stringify(w.key)}]\n//# sourceURL=legion-lazy:${w.key.replace(/\s/g, '_')}\n`;
    parts.push(part);
    size += part.length;
    offsets.push(size);
  }
  // The table of hashes, then the modules' texts (at `offsets`, shifted by the table's length).
  const table = `${TABLE_PREFIX}${parts.map(sha256).join('')}\n`;
  const lazy = table + parts.join('');
  const at = offsets.map((o) => o + table.length);
  if (/[^\x00-\x7f]/.test(lazy)) throw new Error('build: the lazy modules\' text is not ASCII (scripts/lazy-modules.mjs reads it as latin1)');
  const name = lazyModulesName(lazy);
  // In the bundle, a moved module's wrapper gets `__legionLazyModule(i)` for its object: one
  // shape and one function for all of them, where each kept an object literal of its own (its
  // own map and descriptors, its key, a method with its own function info): ~7 heap objects a
  // module that every start deserializes (744 modules). Its name is in the lazy part's text.
  let main = '';
  let cursor = 0;
  moved.forEach((w, i) => {
    main += text.slice(cursor, w.objectStart) + `__legionLazyModule(${i})`;
    cursor = w.objectEnd;
  });
  main += text.slice(cursor);
  return { main: STRICT + loaderSource(name, at, sha256(table)) + main.slice(STRICT.length), lazy, name, moved: moved.map((w) => w.key), at };
}

/**
 * The bundle's loader of lazy modules: `__legionLazy(i, self, args)` runs module `i`'s function,
 * read from the lazy part (bytes `at[i]`..`at[i + 1]`), checked against the table of hashes at
 * the file's start (bytes 0..`at[0]`, whose sha256 is `tableHash`) and compiled at its first
 * call. The descriptor is opened at start (not in a snapshot being built: once deserialized);
 * the table is read at the first lazy load and kept. The snapshot builder's hooks
 * (`__legionStart.lazyLoaded`) hear of every module read.
 */
function loaderSource(name, at, tableHash) {
  return [
    `var __legionLazyAt=[${at.join(',')}],__legionLazyFns=[],__legionLazyFd,__legionLazyTable,__legionLazyHash,__legionLazyFs=require("node:fs"),__legionLazyPath=require("node:path").join(__dirname,${JSON.stringify(name)});`,
    'function __legionLazyOpen(){return __legionLazyFd===void 0&&(__legionLazyFd=__legionLazyFs.openSync(__legionLazyPath,"r")),__legionLazyFd}',
    'if(globalThis.__legionBuildingSnapshot)require("node:v8").startupSnapshot.addDeserializeCallback(()=>{__legionLazyFd=__legionLazyTable=__legionLazyHash=void 0;__legionLazyOpen()});else __legionLazyOpen();',
    // Bytes from..to of the file, read into memory (what is checked is what is compiled).
    'function __legionLazyRead(from,to){const bytes=Buffer.allocUnsafeSlow(to-from);',
    'for(let read=0;read<bytes.length;){const n=__legionLazyFs.readSync(__legionLazyOpen(),bytes,read,bytes.length-read,from+read);if(n===0)throw new Error("legion: the lazy modules\' file is shorter than the bundle expects");read+=n}',
    'return bytes}',
    // The sha256 of bytes as hex: crypto.hash (Node 20.12) is one native call, where a Hash
    // object costs ~25 µs a module at a first model call's burst of ~280 (loaded machine).
    'function __legionLazySha256(){const crypto=require("node:crypto");return crypto.hash?bytes=>crypto.hash("sha256",bytes,"hex"):bytes=>crypto.createHash("sha256").update(bytes).digest("hex")}',
    // Bytes whose sha256 is not `hex`: the error, thrown before anything is compiled.
    'function __legionLazyCheck(bytes,hex){if(__legionLazyHash(bytes)!==hex)throw new Error(`${__legionLazyPath} was changed after the build: reinstall Legion (its code is not evaluated)`)}',
    'function __legionLazy(i,self,args){let fn=__legionLazyFns[i];if(!fn){',
    `if(__legionLazyTable===void 0){__legionLazyHash=__legionLazySha256();const table=__legionLazyRead(0,__legionLazyAt[0]);__legionLazyCheck(table,${JSON.stringify(tableHash)});__legionLazyTable=table.toString("latin1")}`,
    'const bytes=__legionLazyRead(__legionLazyAt[i],__legionLazyAt[i+1]);',
    `__legionLazyCheck(bytes,__legionLazyTable.substr(${TABLE_PREFIX.length}+64*i,64));`,
    '__legionStart?.lazyLoaded?.(i);',
    'fn=__legionLazyFns[i]=__legionLazyEval(bytes.toString("latin1"))}',
    'return fn.apply(self,args)}',
    // The object a moved module's __esm/__commonJS wrapper calls the one method of.
    'function __legionLazyModule(i){return{m(){return __legionLazy(i,this,arguments)}}}',
    // A scope of its own with one name, which the module's code cannot mean: a direct eval sees
    // the names of the scopes around it (in __legionLazy: `i`, `fn`, `self`… would hide the bundle's).
    'var __legionLazyEval=__legionLazySource=>eval(__legionLazySource);',
  ].join('');
}
