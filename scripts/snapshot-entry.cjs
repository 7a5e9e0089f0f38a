// The script `node --build-snapshot` runs to make Legion's V8 start-up snapshot
// (docs/performance.md#start-up; scripts/snapshot.mjs runs it, from scripts/build.mjs):
//   node --snapshot-blob <blob> --build-snapshot scripts/snapshot-entry.cjs <bundle> <loader>
// It evaluates the app bundle (dist/legion-app-<build>.cjs) and the full-screen UI's modules
// (React, Ink, the components) into the heap Node then writes as the snapshot; a start from
// the snapshot (dist/legion, the launcher) skips reading, compiling and evaluating them.
//
// What must not be in a snapshot is what a module reads from the machine while it evaluates:
// the snapshot would replay the build's answer in every start (an environment variable, the
// terminal, the working directory, the clock, a random seed or token). So while the bundle
// evaluates, those reads are recorded, and the build fails on any that ALLOWED does not
// name with the reason it is safe. The builder runs with an empty environment, in /.
//
// Node 20 limits (each found by trying): `require` here loads built-in modules only (the
// bundle's other requires run after the snapshot is deserialized); node:http, node:https and
// node:http2 cannot be in a snapshot (their parser binding is not serializable): the bundle
// gets stand-ins that load them at their first use once deserialized; there is no WebAssembly (yoga, Ink's layout engine, starts in a
// deserialize callback: scripts/build.mjs); and ES2023's copying array methods are missing
// while the snapshot builds (they are there once it is deserialized): stand-ins below, removed
// before the heap is written.
'use strict';
const v8 = require('node:v8');
const { Script } = require('node:vm');
const { readFileSync } = require('node:fs');
const { dirname } = require('node:path');
const { pathToFileURL } = require('node:url');
const { createRequire } = require('node:module');

const [app, loader, lazyJson, mode] = process.argv.slice(2);
/**
 * `list-lazy`: evaluate as for a snapshot, then print the modules read from the bundle's lazy
 * part (scripts/lazy-modules.mjs) as one JSON line (`lazy-loaded: [i, …]`) and exit, writing no
 * snapshot. Otherwise no module may be read from it: the build keeps inline what a start evaluates.
 */
const listLazy = mode === 'list-lazy';
const lazyLoaded = [];
/** The V8 flags the builder runs with (scripts/snapshot.mjs SNAPSHOT_V8_FLAGS): a start has them too, its children not. */
const builderFlags = [];
for (let i = 0; i < process.execArgv.length; i++) {
  const arg = process.execArgv[i];
  if (arg === '--snapshot-blob') i++;
  else if (arg !== '--build-snapshot' && !arg.startsWith('--snapshot-blob=')) builderFlags.push(arg);
}
if (!app || !loader) throw new Error('usage: node --snapshot-blob <blob> --build-snapshot snapshot-entry.cjs <bundle> <loader> [<lazy built-ins>]');
/** Built-ins a snapshot cannot hold, each with its export names (read by the build's own Node). */
const LAZY = new Map(Object.entries(JSON.parse(lazyJson ?? '{}')));

/** Reads module evaluation may make, each with why the snapshot may keep its answer. */
const ALLOWED = [
  { read: /^env (has )?(CI|CONTINUOUS_INTEGRATION)$|^env keys$/, from: /node_modules\/is-in-ci\//, why: 'Ink\'s CI check: the builder\'s environment is empty, and the UI removes these variables before Ink loads in a plain start too' },
  { read: /^env DEV$/, from: /node_modules\/ink\//, why: 'Ink\'s React devtools switch: the builder\'s environment is empty; the devtools are not bundled' },
  { read: /^(env (has )?[A-Z_]+|process\.argv|tty\.isatty)$/, from: /node_modules\/chalk\//, why: 'chalk\'s colour level: computed again once the snapshot is deserialized (scripts/build.mjs)' },
  { read: /^env (TERM|TERM_PROGRAM|TMUX)$/, from: /node_modules\/ansi-escapes\//, why: 'ansi-escapes\' terminal checks: computed again once the snapshot is deserialized (scripts/build.mjs)' },
  { read: /^process\.(stdout|stderr|stdin)$/, from: /node_modules\/ink\/build\/components\/(Stdout|Stderr|Stdin)Context\.js/, why: 'defaults of Ink\'s stream contexts, never used (Ink provides the streams it renders to); Node replaces its own streams after deserializing' },
  { read: /^process\.pid$/, from: /node_modules\/signal-exit\//, why: 'a type check of process.pid' },
  { read: /^cwd\(\)$/, from: /node_modules\/stack-utils\//, why: 'stack-utils\' default directory, never used (Ink\'s error screen passes the directory when it first needs it)' },
  // The warm-up render of the first screen (components/warm-render.tsx): an Ink instance on streams of its own, unmounted at once.
  { read: /^process\.(stdout|stdin|stderr)$/, from: /^at render$/, why: 'Ink\'s render defaults, replaced by the warm-up render\'s own streams' },
  { read: /^env INK_SCREEN_READER$/, from: /^at new Ink$/, why: 'a setting of the warm-up render\'s Ink instance, dropped at its unmount' },
  { read: /^env DEV$/, from: /^at isDev$/, why: 'Ink\'s devtools switch, read at each commit and not kept' },
  { read: /^process\.pid$/, from: /^at processOk$/, why: 'signal-exit\'s check of the process when the warm-up render\'s Ink hooks the exit; unhooked at its unmount' },
];

// --- recording what module evaluation reads ---------------------------------------------------
const seen = [];
let recording = true;
/** A frame of a module's evaluation (esbuild names its function after the module's path). */
const MODULE_FRAME = /^at (\S*\/)?(node_modules|src|components|bin)\/\S+\.(m?[jt]sx?|cjs|json) /;
/**
 * Where a read was made: the module whose evaluation made it (esbuild names each module's
 * evaluating function after its path), else the first frame outside Node and this file; null
 * when Node's own code made it (its warnings, its console), which is Node's to handle.
 */
const whereFrom = (stack) => {
  const frames = String(stack).split('\n').slice(1).map((l) => l.trim());
  const caller = frames.find((l) => !/snapshot-entry\.cjs/.test(l));
  if (!caller || /\(node:|^at node:/.test(caller)) return null;
  const module = frames.find((l) => MODULE_FRAME.test(l));
  return module ?? frames.find((l) => !/\(node:|^at node:|snapshot-entry\.cjs/.test(l)) ?? null;
};
/** Inside `hooks.throwaway`: only reads made by a module's evaluation are recorded, and those in KEPT_ANYWAY. */
let throwaway = false;
/**
 * Reads whose answer stays in the heap even when the work that made them is thrown away:
 * `randomUUID` takes its UUIDs from a cache of random bytes Node fills once per 128 UUIDs and
 * keeps in a module variable, so the snapshot would hold the cache and every start would hand
 * out the same UUIDs (`randomUUID({ disableEntropyCache: true })` uses no cache: not noted).
 */
const KEPT_ANYWAY = new Set(['crypto.randomUUID']);
const note = (read) => {
  if (!recording) return;
  const frame = whereFrom(new Error().stack);
  if (frame && (!throwaway || MODULE_FRAME.test(frame) || KEPT_ANYWAY.has(read))) seen.push({ read, frame: frame.replace(/ \(.*\)$/, '') });
};
const restore = [];
const stackTraceLimit = Object.getOwnPropertyDescriptor(Error, 'stackTraceLimit');
Error.stackTraceLimit = 40;
restore.push(() => (stackTraceLimit ? Object.defineProperty(Error, 'stackTraceLimit', stackTraceLimit) : delete Error.stackTraceLimit));
const wrap = (object, name, read) => {
  const own = Object.getOwnPropertyDescriptor(object, name);
  const original = object[name];
  object[name] = function (...args) {
    if (!(name === 'randomUUID' && args[0]?.disableEntropyCache === true)) note(read);
    return original.apply(this, args);
  };
  restore.push(() => (own ? Object.defineProperty(object, name, own) : delete object[name]));
};
const env = process.env;
process.env = new Proxy(env, {
  get: (target, key) => (typeof key === 'string' && note(`env ${key}`), Reflect.get(target, key)),
  has: (target, key) => (note(`env has ${String(key)}`), Reflect.has(target, key)),
  ownKeys: (target) => (note('env keys'), Reflect.ownKeys(target)),
});
restore.push(() => (process.env = env));
wrap(process, 'cwd', 'cwd()');
wrap(process, 'hrtime', 'process.hrtime');
wrap(process, 'uptime', 'process.uptime');
wrap(Date, 'now', 'Date.now');
wrap(performance, 'now', 'performance.now');
wrap(Math, 'random', 'Math.random');
const RealDate = Date;
globalThis.Date = new Proxy(RealDate, {
  construct: (target, args, newTarget) => (args.length === 0 && note('new Date()'), Reflect.construct(target, args, newTarget)),
  apply: (target, self, args) => (note('Date()'), Reflect.apply(target, self, args)),
});
restore.push(() => (globalThis.Date = RealDate));
const crypto = require('node:crypto');
for (const name of ['randomBytes', 'randomUUID', 'randomFillSync', 'randomFill', 'randomInt', 'generateKeyPairSync']) wrap(crypto, name, `crypto.${name}`);
const webcrypto = Object.getPrototypeOf(crypto.webcrypto);
for (const name of ['getRandomValues', 'randomUUID']) wrap(webcrypto, name, `crypto.${name}`);
const os = require('node:os');
for (const name of ['homedir', 'hostname', 'userInfo', 'tmpdir', 'networkInterfaces', 'cpus', 'totalmem', 'freemem', 'loadavg', 'uptime']) wrap(os, name, `os.${name}`);
wrap(require('node:tty'), 'isatty', 'tty.isatty');
const fs = require('node:fs');
const realpathNative = fs.realpathSync.native;
for (const name of ['readFileSync', 'existsSync', 'statSync', 'lstatSync', 'readdirSync', 'openSync', 'accessSync', 'realpathSync']) wrap(fs, name, `fs.${name}`);
// The wrapper of realpathSync has the original's `native` too (the workspace and trust checks call it).
fs.realpathSync.native = realpathNative;
wrap(fs.realpathSync, 'native', 'fs.realpathSync.native');
for (const name of ['stdout', 'stderr', 'stdin', 'argv', 'execArgv', 'pid', 'ppid', 'title', 'env']) {
  if (name === 'env') continue;
  const descriptor = Object.getOwnPropertyDescriptor(process, name);
  if (!descriptor) continue;
  Object.defineProperty(process, name, {
    configurable: true,
    enumerable: descriptor.enumerable,
    get() {
      note(`process.${name}`);
      return descriptor.get ? descriptor.get.call(process) : descriptor.value;
    },
    set(value) {
      if (descriptor.set) descriptor.set.call(process, value);
      else descriptor.value = value;
    },
  });
  restore.push(() => Object.defineProperty(process, name, descriptor));
}

// --- Node 20's snapshot builder lacks these (see the top) --------------------------------------
const standIns = {
  toSorted(compare) { return Array.prototype.slice.call(this).sort(compare); },
  toReversed() { return Array.prototype.slice.call(this).reverse(); },
  toSpliced(...args) { const copy = Array.prototype.slice.call(this); copy.splice(...args); return copy; },
  with(index, value) { const copy = Array.prototype.slice.call(this); copy[index < 0 ? copy.length + index : index] = value; return copy; },
};
for (const [name, value] of Object.entries(standIns)) {
  if (name in Array.prototype) continue;
  Object.defineProperty(Array.prototype, name, { value, writable: true, configurable: true });
  restore.push(() => delete Array.prototype[name]);
}

// --- built-ins a start would load after deserializing ---------------------------------------------
// Node compiles a built-in module from the code cache embedded in its binary, which V8 refuses
// to a process with other V8 flags than Node's defaults (the snapshot's, SNAPSHOT_V8_FLAGS in
// scripts/snapshot.mjs: `[Cached code failed check]` under --profile-deserialization): a
// built-in first loaded after a start from the snapshot is compiled from its source. Those the
// first frame needs are loaded, and run once, here, so their code is in the snapshot
// (test/e2e/snapshot-start.test.ts: the first frame loads none). `util.parseArgs` (the
// command line, src/cli/args.ts) loads on first use.
require('node:util').parseArgs({ args: ['--flag', 'value', 'word'], options: { flag: { type: 'string' } }, allowPositionals: true, strict: true });

// --- evaluating the bundle ----------------------------------------------------------------------
// Read by yoga's start (scripts/build.mjs): in a snapshot it starts once deserialized.
globalThis.__legionBuildingSnapshot = true;
restore.push(() => delete globalThis.__legionBuildingSnapshot);
let realRequire = require;
let deserialized = false;
const lazyModules = new Map();
/**
 * A built-in the snapshot cannot hold (LAZY) as a stand-in that loads it at its first use once
 * deserialized (a start that never uses it never loads it). Its export names are listed (so
 * esbuild's interop can copy them as getters); using one while the snapshot builds fails the
 * build, naming the module that did.
 */
function lazyBuiltin(id, names) {
  let real;
  const load = (key) => {
    if (!deserialized) throw new Error(`node:${id} cannot be in a start snapshot (Node 20): ${String(key)} used while the bundle evaluated, by ${whereFrom(new Error().stack) ?? 'the bundle'}; use it at first use instead`);
    return (real ??= realRequire(`node:${id}`));
  };
  return new Proxy({}, {
    // Not an export (esbuild's interop asks for `__esModule`): nothing, until deserialized.
    get: (_, key) => (deserialized || names.includes(key) ? Reflect.get(load(key), key) : undefined),
    has: (_, key) => names.includes(key) || Reflect.has(load(key), key),
    ownKeys: () => [...names],
    getOwnPropertyDescriptor: (_, key) => (names.includes(key) ? { configurable: true, enumerable: true, writable: true, value: deserialized ? load(key)[key] : undefined } : undefined),
    set: (_, key, value) => Reflect.set(load(key), key, value),
    getPrototypeOf: () => Object.prototype,
  });
}
/** The bundle's `require`: Node's built-ins now; once deserialized, a require from the bundle. */
const bundleRequire = (id) => {
  const bare = id.startsWith('node:') ? id.slice(5) : id;
  if (!deserialized && LAZY.has(bare)) {
    if (!lazyModules.has(bare)) lazyModules.set(bare, lazyBuiltin(bare, LAZY.get(bare)));
    return lazyModules.get(bare);
  }
  return lazyModules.get(bare) ?? realRequire(id);
};
bundleRequire.resolve = (id, options) => realRequire.resolve(id, options);
let runApp;
let preloaded;
const hooks = {
  tuiStarted() {},
  /** A module's code was read from the bundle's lazy part (scripts/lazy-modules.mjs). */
  lazyLoaded(index) {
    lazyLoaded.push(index);
  },
  snapshot(run, preload) {
    runApp = run;
    preloaded = preload();
  },
  /**
   * Run `work`, which reads the machine for a throwaway result (the warm-up composition of a
   * run in a temporary folder, src/cli/warm-compose.ts, tested to leave nothing in the heap):
   * its reads are not recorded, except those of a module evaluated meanwhile.
   */
  async throwaway(work) {
    throwaway = true;
    try {
      return await work();
    } finally {
      throwaway = false;
    }
  },
};
const module_ = { exports: {} };
const wrapper = new Script(readFileSync(app, 'latin1'), { filename: app }).runInThisContext();
wrapper(module_.exports, bundleRequire, module_, app, dirname(app), pathToFileURL(app).href, hooks);
if (!runApp || !preloaded) throw new Error(`${app} did not hand over its start (bin/legion.ts, __legionStart.snapshot)`);

preloaded.then(
  () => {
    if (listLazy) {
      process.stdout.write(`lazy-loaded: ${JSON.stringify(lazyLoaded)}\n`);
      process.exit(0);
    }
    if (lazyLoaded.length > 0) {
      process.stderr.write(`snapshot: ${lazyLoaded.length} modules were read from the bundle's lazy part while the snapshot built (scripts/lazy-modules.mjs: the build keeps inline what a start evaluates)\n`);
      process.exit(3);
    }
    recording = false;
    for (const undo of restore.reverse()) undo();
    const unexplained = seen.filter((s) => !ALLOWED.some((a) => a.read.test(s.read) && a.from.test(s.frame)));
    if (unexplained.length > 0) {
      const lines = [...new Set(unexplained.map((s) => `${s.read} (${s.frame})`))];
      process.stderr.write(`snapshot: module evaluation read what a snapshot would keep from the build (make it read at first use, or explain it in ALLOWED in scripts/snapshot-entry.cjs):\n  ${lines.join('\n  ')}\n`);
      process.exit(3);
    }
  },
  (error) => {
    process.stderr.write(`snapshot: the UI's modules failed to evaluate: ${error?.stack ?? error}\n`);
    process.exit(3);
  },
);

v8.startupSnapshot.setDeserializeMainFunction(() => {
  realRequire = createRequire(app);
  deserialized = true;
  // As a plain start sees them: argv[1] the entry (the app starts itself with it, e.g. `legion
  // serve`), and no snapshot flags (the blob, the builder's V8 flags) for such children (they start plain).
  process.argv.splice(1, 0, loader);
  const execArgv = [];
  for (let i = 0; i < process.execArgv.length; i++) {
    const arg = process.execArgv[i];
    if (arg === '--snapshot-blob') i++;
    else if (!arg.startsWith('--snapshot-blob=') && !builderFlags.includes(arg)) execArgv.push(arg);
  }
  process.execArgv = execArgv;
  runApp();
});
