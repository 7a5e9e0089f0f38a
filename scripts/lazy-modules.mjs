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
import { createHash } from 'node:crypto';
import * as acorn from 'acorn';

/** The file name of a lazy part (content-addressed, like the bundle). */
export const lazyModulesName = (text) => `legion-lazy-${createHash('sha256').update(text).digest('hex').slice(0, 16)}.js`;

/**
 * The module wrappers at the top level of esbuild's bundle text: `{ key, start, bodyStart, end }`
 * per `__esm`/`__commonJS` call (`start`..`end` its one method, `bodyStart` its `{`).
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
      wrappers.push({ key, start: method.start, bodyStart: method.value.body.start, end: method.end });
    }
  }
  if (wrappers.length === 0) throw new Error('build: no __esm/__commonJS module wrapper found in the bundle (scripts/lazy-modules.mjs)');
  return wrappers;
}

/** What the bundle's text starts with (esbuild's CommonJS output of strict code), after which the loader goes. */
const STRICT = '"use strict";';

/**
 * The bundle's text with the bodies of the wrappers whose key is not in `inline` moved to a
 * lazy part: `{ main, lazy, name, moved }` (`name`: the lazy part's file name, beside the
 * bundle; `moved`: the keys moved, by index). `wrappers`: moduleWrappers(text).
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
  const lazy = parts.join('');
  if (/[^\x00-\x7f]/.test(lazy)) throw new Error('build: the lazy modules\' text is not ASCII (scripts/lazy-modules.mjs reads it as latin1)');
  const name = lazyModulesName(lazy);
  let main = '';
  let at = 0;
  moved.forEach((w, i) => {
    main += text.slice(at, w.bodyStart) + `{return __legionLazy(${i},this,arguments)}`;
    at = w.end;
  });
  main += text.slice(at);
  return { main: STRICT + loaderSource(name, offsets) + main.slice(STRICT.length), lazy, name, moved: moved.map((w) => w.key) };
}

/**
 * The bundle's loader of lazy modules: `__legionLazy(i, self, args)` runs module `i`'s function,
 * read from the lazy part (bytes `offsets[i]`..`offsets[i + 1]`) and compiled at its first call.
 * The descriptor is opened at start (not in a snapshot being built: once deserialized). The
 * snapshot builder's hooks (`__legionStart.lazyLoaded`) hear of every module read.
 */
function loaderSource(name, offsets) {
  return [
    `var __legionLazyAt=[${offsets.join(',')}],__legionLazyFns=[],__legionLazyFd,__legionLazyFs=require("node:fs"),__legionLazyPath=require("node:path").join(__dirname,${JSON.stringify(name)});`,
    'function __legionLazyOpen(){return __legionLazyFd===void 0&&(__legionLazyFd=__legionLazyFs.openSync(__legionLazyPath,"r")),__legionLazyFd}',
    'if(globalThis.__legionBuildingSnapshot)require("node:v8").startupSnapshot.addDeserializeCallback(()=>{__legionLazyFd=void 0;__legionLazyOpen()});else __legionLazyOpen();',
    'function __legionLazy(i,self,args){let fn=__legionLazyFns[i];if(!fn){',
    'const from=__legionLazyAt[i],bytes=Buffer.allocUnsafeSlow(__legionLazyAt[i+1]-from);',
    'for(let read=0;read<bytes.length;){const n=__legionLazyFs.readSync(__legionLazyOpen(),bytes,read,bytes.length-read,from+read);if(n===0)throw new Error("legion: the lazy modules\' file is shorter than the bundle expects");read+=n}',
    '__legionStart?.lazyLoaded?.(i);',
    'fn=__legionLazyFns[i]=__legionLazyEval(bytes.toString("latin1"))}',
    'return fn.apply(self,args)}',
    // A scope of its own with one name, which the module's code cannot mean: a direct eval sees
    // the names of the scopes around it (in __legionLazy: `i`, `fn`, `self`… would hide the bundle's).
    'var __legionLazyEval=__legionLazySource=>eval(__legionLazySource);',
  ].join('');
}
