// esbuild's `__toESM` with one copy per module instead of one per importer
// (docs/decisions/startup.md#what-the-snapshots-heap-holds-and-what-deserializing-it-costs).
// Used by scripts/build.mjs on the bundle's text.
//
// A bundled module that imports a CommonJS module (React, Ink's dependencies) or a Node built-in
// by default or as a namespace gets `__toESM(require_x())`: a new object with a getter (a
// closure and an accessor pair) for every export, made for each importing module. React's 48
// importers made 48 such copies, `node:process`'s 35; in the start-up snapshot, 103 copies held
// ~11,000 objects that every start deserializes. A copy is only getters reading the module's
// exports live, so importers can share it: this `__toESM` keeps one per module (and per
// `default` mode), weakly, and makes a new one when the module's own property names grew or
// shrank since (an importer of a module still evaluating, in a require cycle, saw fewer).

/** esbuild's helper as it prints it (minified syntax and whitespace, names kept), up to the `;` or `,` that ends its declaration. */
const ESBUILD_TO_ESM = 'var __toESM=(mod,isNodeMode,target)=>(target=mod!=null?__create(__getProtoOf(mod)):{},__copyProps(isNodeMode||!mod||!mod.__esModule?__defProp(target,"default",{value:mod,enumerable:!0}):target,mod))';

/**
 * The same helper, one copy per (module, mode): `named` when the module says it is an ES module
 * (`__esModule`) and the importer is not Node's ESM mode (then no `default` is added).
 */
const SHARED_TO_ESM = [
  'var __legionInterop=new WeakMap,__toESM=(mod,isNodeMode,target)=>{',
  'let named=!isNodeMode&&!!mod&&!!mod.__esModule,',
  'shared=mod!=null&&(typeof mod=="object"||typeof mod=="function"),',
  'names=shared?__getOwnPropNames(mod).length:0,',
  'known=shared?__legionInterop.get(mod):void 0,',
  'hit=known&&known[named?1:0];',
  'if(hit&&hit.names===names)return hit.target;',
  'target=mod!=null?__create(__getProtoOf(mod)):{},',
  '__copyProps(named?target:__defProp(target,"default",{value:mod,enumerable:!0}),mod);',
  'if(shared){known||__legionInterop.set(mod,known=[]);known[named?1:0]={target,names}}',
  'return target}',
].join('');

/** The bundle's text with the shared `__toESM`; throws when esbuild's helper is not there exactly once (another esbuild prints it otherwise). */
export function shareInteropCopies(text) {
  const at = text.indexOf(ESBUILD_TO_ESM);
  if (at < 0 || text.indexOf(ESBUILD_TO_ESM, at + 1) >= 0) {
    throw new Error('build: esbuild\'s __toESM helper is not printed as scripts/esm-interop.mjs expects (once): update ESBUILD_TO_ESM');
  }
  return text.slice(0, at) + SHARED_TO_ESM + text.slice(at + ESBUILD_TO_ESM.length);
}
