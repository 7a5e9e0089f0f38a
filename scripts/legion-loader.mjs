#!/usr/bin/env node
// dist/legion.js: starts the app bundle (dist/legion-app.cjs) through V8's code cache.
// Written by scripts/build.mjs from scripts/legion-loader.mjs (BUILD_ID is the bundle's hash).
//
// Compiling the 3 MB bundle costs ~45 ms at every start; with the code V8 compiled in an
// earlier run (functions compiled lazily included), start-up skips most of it. Node 20 has no
// compile cache for ES modules, hence a CommonJS bundle run through `vm.Script` with
// `cachedData`, like Node's own CommonJS loader plus the cache.
// The cache: `compile-<build>-<node>-<arch>-<kind>.bin` in $LEGION_CACHE_DIR, else
// $XDG_CACHE_HOME/legion, else ~/.cache/legion (a directory the user owns, not writable by
// others). `kind` is `tui` when written by a process that drew the full-screen UI (it holds
// the UI's code too), else `cli`; the loader prefers `tui`. A process that found no usable
// cache of its kind writes one when it ends (exit, or SIGHUP/SIGTERM). V8 rejects a cache
// made by another V8 version or with other flags; it is then rewritten. LEGION_COMPILE_CACHE=0
// turns all of this off. Any cache problem only costs speed: the bundle runs without it.
import { createRequire } from 'node:module';
import { Script } from 'node:vm';
import { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const BUILD_ID = '__LEGION_BUILD_ID__';
const app = join(dirname(fileURLToPath(import.meta.url)), 'legion-app.cjs');
// `(function (exports, require, module, __filename, __dirname, __legionImportMetaUrl,
// __legionStart) {…})`: Node's CommonJS parameters, plus what stands for `import.meta.url` and
// the hooks below. ASCII (the build checks), so latin1 reads it as it is, without decoding.
const wrapper = readFileSync(app, 'latin1');

const cache = openCache();
let cachedData;
let kind = null;
for (const k of ['tui', 'cli']) {
  cachedData = cache?.read(k);
  if (cachedData) {
    kind = k;
    break;
  }
}
const script = new Script(wrapper, { filename: app, ...(cachedData ? { cachedData } : {}) });
const accepted = cachedData !== undefined && !script.cachedDataRejected;
cachedData = undefined;

/** What the app tells the loader (bin/legion.ts): the full-screen UI started. */
let tui = false;
const start = { tuiStarted: () => void (tui = true) };
// Listeners only when this process may write a cache (none is in use, or a `cli` one).
if (cache && !(accepted && kind === 'tui')) {
  let saved = false;
  const save = () => {
    const want = tui ? 'tui' : 'cli';
    if (saved || (accepted && kind === want)) return;
    saved = true;
    cache.write(want, script.createCachedData());
  };
  process.on('exit', save);
  // Signals that end the process without 'exit': save first, then let the signal do what it
  // would have done (the app's own handlers, or the default: end the process).
  for (const signal of ['SIGHUP', 'SIGTERM']) {
    const onSignal = () => {
      save();
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, onSignal);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, onSignal);
  }
}

const module = { exports: {} };
script.runInThisContext()(module.exports, createRequire(app), module, app, dirname(app), pathToFileURL(app).href, start);

function openCache() {
  const env = process.env;
  if (env.LEGION_COMPILE_CACHE === '0' || BUILD_ID.startsWith('__')) return null;
  const dir = env.LEGION_CACHE_DIR || join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache'), 'legion');
  const prefix = `compile-${BUILD_ID}-${process.version}-${process.arch}-`;
  const file = (k) => join(dir, `${prefix}${k}.bin`);
  /** Ours alone: owned by this user and not writable by others (the cache is code). */
  const safe = () => {
    const s = statSync(dir);
    return s.isDirectory() && (typeof process.getuid !== 'function' || s.uid === process.getuid()) && (s.mode & 0o022) === 0;
  };
  return {
    read(k) {
      try {
        return safe() ? readFileSync(file(k)) : undefined;
      } catch {
        return undefined;
      }
    },
    write(k, data) {
      try {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        if (!safe()) return;
        const temp = `${file(k)}.${process.pid}.tmp`;
        writeFileSync(temp, data, { mode: 0o600 });
        renameSync(temp, file(k));
        // Caches of other builds are dead weight: keep the newest few.
        const others = readdirSync(dir)
          .filter((n) => n.startsWith('compile-') && n.endsWith('.bin') && !n.startsWith(prefix))
          .map((n) => ({ n, t: statSync(join(dir, n)).mtimeMs }))
          .sort((a, b) => b.t - a.t);
        for (const { n } of others.slice(4)) unlinkSync(join(dir, n));
      } catch {
        // No cache this time.
      }
    },
  };
}
