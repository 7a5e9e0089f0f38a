// The bundle's local names shortened (docs/performance.md#the-start-up-snapshot). Used by
// scripts/build.mjs on the bundle's text, before its lazy part is split off.
//
// The start-up snapshot holds the bundle's whole source (V8 compiles a function from it when it
// first runs), and a start reads, copies, checksums and deserializes the blob byte by byte
// (~2–3 ms of CPU per MB). esbuild's output already has no whitespace; its parameters and local
// variables keep their full names. swc's mangler renames those (`compress` off: the code is
// otherwise as esbuild printed it) and keeps what code or a reader can see:
// - the bundle's top-level names (the modules' bindings, esbuild's helpers, what the lazy part
//   evaluates in the bundle's scope, what scripts/lazy-modules.mjs and the snapshot builder look
//   for): a script's top level is never mangled;
// - every function's and class's own name, so `.name` and a stack trace's function names are
//   the ones the code wrote (`keep_fnames`, `keep_classnames`); a variable that holds an
//   anonymous function or class names it (`const Foo = class {}`: `Foo.name`): such variables
//   are kept by name too (swc keeps those declared with a function, not with a class, nor those
//   assigned one later), found by the text's `name = class`/`function`/arrow shapes;
// - property names, string contents and the modules' keys (esbuild's `"path"() {…}` methods,
//   which name each module's function in a stack).
// What changes: a V8 message that prints an expression (`e.map is not a function`) prints the
// short name.
import { minifySync } from '@swc/core';

/**
 * `name =` (or `name ||=`…) followed by an anonymous class or function: its name is the
 * variable's. A lookahead, so a binding inside another's function (a parameter's default) is
 * found too.
 */
const NAMED_BY_BINDING = /([A-Za-z_$][\w$]*)\s*(?:\|\||&&|\?\?)?=(?=\s*(?:class\b|(?:async\s+)?function\s*\*?\s*\(|(?:async\s*)?(?:\((?:[^()]|\([^()]*\))*\)|[A-Za-z_$][\w$]*)\s*=>))/g;

/** The names of variables that name an anonymous function or class (kept by the mangler). */
export function bindingNames(text) {
  return [...new Set([...text.matchAll(NAMED_BY_BINDING)].map((m) => m[1]))];
}

/** `text` (a strict script: esbuild's CommonJS bundle) with its local names shortened; ASCII in, ASCII out. */
export function mangleLocals(text) {
  const { code } = minifySync(text, {
    compress: false,
    mangle: { toplevel: false, keep_fnames: true, keep_classnames: true, reserved: bindingNames(text) },
    format: { ascii_only: true, comments: false },
    module: false,
    sourceMap: false,
  });
  const out = code.trim();
  if (/[^\x00-\x7f]/.test(out)) throw new Error('build: the mangled bundle is not ASCII (scripts/mangle-locals.mjs: V8 would hold it as two-byte text)');
  return out;
}
