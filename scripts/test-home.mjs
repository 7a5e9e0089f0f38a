// A home of its own for a test or bench run (docs/development.md#a-home-of-its-own): the run's
// processes see a temporary HOME (the XDG folders follow it), TMPDIR and tmux socket folder, so that nothing a
// test does (trusting a workspace, writing a compile cache, `git config --global`) reaches the
// user who started it; and the check that it did not: the real Legion folders, stamped before
// and after the run.
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Variables that would send a process back to the user's own folders: replaced or dropped. */
const USER_PLACES = [
  'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME', 'XDG_RUNTIME_DIR',
  'LEGION_CACHE_DIR', 'LEGION_START_WORKSPACE', 'GIT_CONFIG_GLOBAL', 'TMUX', 'TMUX_TMPDIR',
  'npm_config_cache', 'NPM_CONFIG_CACHE', 'npm_config_logs_dir', 'NPM_CONFIG_LOGS_DIR',
  // git's repository variables (`git rev-parse --local-env-vars`), set when `npm test` runs from
  // a git hook: with them, a test's `git commit` in its temp workspace lands in the user's repository.
  'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_CONFIG', 'GIT_CONFIG_PARAMETERS', 'GIT_CONFIG_COUNT', 'GIT_OBJECT_DIRECTORY',
  'GIT_DIR', 'GIT_WORK_TREE', 'GIT_IMPLICIT_WORK_TREE', 'GIT_GRAFT_FILE', 'GIT_INDEX_FILE', 'GIT_NO_REPLACE_OBJECTS',
  'GIT_REPLACE_REF_BASE', 'GIT_PREFIX', 'GIT_INTERNAL_SUPER_PREFIX', 'GIT_SHALLOW_FILE', 'GIT_COMMON_DIR',
];

/** The `GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>` pairs GIT_CONFIG_COUNT counts: dropped with it. */
const GIT_CONFIG_PAIR = /^GIT_CONFIG_(KEY|VALUE)_\d+$/;

/**
 * Where @swc/core unpacks its native binding (30 MB; `SWC_NATIVE_BINDING_CACHE`, else
 * `~/.cache/swc-native-0`): a folder of the project's, kept between runs, so that a run neither
 * writes the user's cache nor unpacks it again into each fresh home. swc wants it the user's own, 0700.
 */
export function swcCacheDir() {
  const modules = fileURLToPath(new URL('../node_modules', import.meta.url));
  if (!existsSync(modules)) return null;
  const dir = join(realpathSync(modules), '.cache', 'legion-test-swc');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  return dir;
}

/** The identity of commits tests make (git refuses to commit without one). */
const GIT_IDENTITY = '[user]\n\tname = Legion tests\n\temail = tests@legion.invalid\n';

/**
 * Make the run's folders and return the environment that uses them. The temp folder is a fresh
 * folder of the real one (a short name: unix socket paths under it stay far below their 107
 * bytes), open to other users as /tmp is (tests run a command as another user). HOME is a fresh
 * folder outside /tmp (in /var/tmp where there is one), as a real home is: the shell sandbox
 * gives its commands a private, empty /tmp, and a home there would vanish in it. Only HOME is
 * set, the XDG variables are dropped: every folder derives from HOME, so a test that gives a
 * process a HOME of its own moves all of them with it. npm keeps the user's settings
 * (`~/.npmrc`: which registry) and caches in the run's home. git's repository variables are
 * dropped; swc's native binding is unpacked once into the project's cache (swcCacheDir).
 * `cleanup` removes both folders.
 */
export function makeTestHome(baseEnv = process.env) {
  const realHome = baseEnv.HOME || homedir();
  const root = mkdtempSync(join(tmpdir(), 'lt-'));
  chmodSync(root, 0o755);
  const home = mkdtempSync(join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), 'lt-home-'));
  const env = { ...baseEnv };
  for (const name of Object.keys(env)) if (USER_PLACES.includes(name) || GIT_CONFIG_PAIR.test(name)) delete env[name];
  const places = { HOME: home, TMPDIR: join(root, 'tmp'), TMUX_TMPDIR: join(root, 'tmux') };
  mkdirSync(places.TMPDIR, { mode: 0o700 });
  chmodSync(places.TMPDIR, 0o1777);
  mkdirSync(places.TMUX_TMPDIR, { mode: 0o700 });
  writeFileSync(join(home, '.gitconfig'), GIT_IDENTITY, { mode: 0o600 });
  const npmrc = baseEnv.npm_config_userconfig || baseEnv.NPM_CONFIG_USERCONFIG || join(realHome, '.npmrc');
  delete env.NPM_CONFIG_USERCONFIG;
  Object.assign(env, places, { npm_config_userconfig: npmrc, LEGION_TEST_HOME_ROOT: root });
  const swc = swcCacheDir();
  if (swc) env.SWC_NATIVE_BINDING_CACHE = swc;
  const markers = [...new Set([root, realpathSync(root), home, realpathSync(home)])];
  const cleanup = () => {
    for (const dir of [root, home]) rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  };
  return { root, home, realHome, env, markers, cleanup };
}

/**
 * The user's own places a test run must leave alone: Legion's folders (config, cache, data,
 * state, by the XDG variables of the user's environment and by their defaults) and git's global
 * config. Only Legion (and git, for the last) writes there, so a change during a run is the run's
 * unless a `legion` was started beside it.
 */
export function watchedPlaces(realEnv = process.env) {
  const home = realEnv.HOME || homedir();
  const places = new Set([
    join(home, '.config', 'legion'), join(home, '.cache', 'legion'), join(home, '.local', 'share', 'legion'), join(home, '.local', 'state', 'legion'),
    join(home, '.legion'), join(home, '.gitconfig'), join(home, '.config', 'git'),
  ]);
  for (const [name, sub] of [['XDG_CONFIG_HOME', 'legion'], ['XDG_CACHE_HOME', 'legion'], ['XDG_DATA_HOME', 'legion'], ['XDG_STATE_HOME', 'legion'], ['XDG_CONFIG_HOME', 'git']]) {
    if (realEnv[name]) places.add(join(realEnv[name], sub));
  }
  if (realEnv.LEGION_CACHE_DIR) places.add(realEnv.LEGION_CACHE_DIR);
  if (realEnv.GIT_CONFIG_GLOBAL) places.add(realEnv.GIT_CONFIG_GLOBAL);
  return [...places];
}

/**
 * Every path under `places` (each place included) with its stamp: type, mode, size, inode and
 * modification time (reading changes none of them), and for a file its bytes when small (to
 * tell whether a change names the run). A missing place is recorded as such.
 */
export function stampPlaces(places) {
  const stamps = new Map();
  const visit = (path) => {
    let s;
    try {
      s = lstatSync(path, { bigint: true });
    } catch (error) {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return;
      stamps.set(path, { stamp: `unreadable:${error.code}`, text: '' });
      return;
    }
    const type = s.isDirectory() ? 'dir' : s.isFile() ? 'file' : s.isSymbolicLink() ? 'link' : 'other';
    // A folder's own times change with its entries, which are compared one by one.
    const times = type === 'dir' ? '' : `${s.size}:${s.mtimeNs}:${s.ino}`;
    let text = '';
    if (type === 'file' && s.size <= 1n << 20n) {
      try { text = readFileSync(path, 'latin1'); } catch { /* gone meanwhile */ }
    }
    stamps.set(path, { stamp: `${type}:${(s.mode & 0o7777n).toString(8)}:${times}`, text });
    if (type !== 'dir') return;
    let names = [];
    try { names = readdirSync(path); } catch { /* unreadable folder: its stamp is enough */ }
    for (const name of names.sort()) visit(join(path, name));
  };
  for (const place of places) visit(place);
  return stamps;
}

/**
 * What changed between two stamps of the same places. `leaked`: changes that name one of `markers`
 * (the run's own folder, as made and as its real path, in the path or in the file's bytes before or after: a trust registry entry,
 * a hook or MCP approval naming a test's workspace), which only this run's processes know:
 * proof of a leak whatever else runs beside it. `meanwhile`: every other change, which may be
 * this run's too, or a `legion` the user ran meanwhile.
 */
export function changesBetween(before, after, markers) {
  const leaked = [];
  const meanwhile = [];
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort();
  for (const path of paths) {
    const was = before.get(path);
    const now = after.get(path);
    if (was && now && was.stamp === now.stamp && was.text === now.text) continue;
    const what = !was ? 'created' : !now ? 'removed' : 'changed';
    const names = markers.some((m) => path.includes(m) || (was?.text ?? '').includes(m) || (now?.text ?? '').includes(m));
    (names ? leaked : meanwhile).push(`${what}: ${path}`);
  }
  return { leaked, meanwhile };
}

/**
 * The verdict after a run on the user's places stamped `before` (changesBetween): it fails on a
 * change that names the run; on any other change only when asked (LEGION_TEST_STRICT_HOME=1, on a
 * machine where surely nothing else runs): a `legion` started beside the run (a benchmark, a
 * developer's own) makes such changes too, and a CI machine is not always alone either.
 */
export function verdictOnPlaces(before, places, home, env = process.env) {
  const { leaked, meanwhile } = changesBetween(before, stampPlaces(places), home.markers);
  const strict = env.LEGION_TEST_STRICT_HOME === '1';
  const lines = [];
  if (leaked.length > 0) lines.push(`✗ the run wrote into the user's own folders (it names a folder of the run's: ${home.markers.join(', ')}):`, ...leaked.map((l) => `  ${l}`));
  if (meanwhile.length > 0) {
    lines.push(`${strict ? '✗' : '!'} changed in the user's own folders during the run${strict ? '' : ' (by this run, or by a legion started beside it)'}:`, ...meanwhile.map((l) => `  ${l}`));
  }
  return { fail: leaked.length > 0 || (strict && meanwhile.length > 0), lines };
}

const SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

/**
 * Run commands in `home` (makeTestHome) until `finish`, which removes its folders (or keeps them,
 * saying where, with LEGION_TEST_KEEP_HOME=1). An interrupt (SIGINT, SIGTERM, SIGHUP; Ctrl+C
 * reaches the whole process group) is passed to the running command, waited for, and the run's
 * folders removed before this process exits with 128 + the signal's number.
 */
export function superviseRun(home, { env = process.env, log = (line) => console.error(line), exit = (code) => process.exit(code) } = {}) {
  let child = null;
  let interrupted = null;
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    for (const signal of Object.keys(SIGNALS)) process.off(signal, onSignal);
    if (env.LEGION_TEST_KEEP_HOME === '1') log(`test folders kept: ${home.root} ${home.home}`);
    else home.cleanup();
  };
  const leave = () => {
    finish();
    exit(128 + SIGNALS[interrupted]);
  };
  function onSignal(signal) {
    interrupted ??= signal;
    if (child) child.kill(signal);
    else leave();
  }
  for (const signal of Object.keys(SIGNALS)) process.on(signal, onSignal);
  /** Run `command` with inherited stdio; resolves to its exit status (1 when it could not start or was killed). */
  const run = (command, args, options = {}) => new Promise((resolve) => {
    const started = spawn(command, args, { stdio: 'inherit', ...options });
    child = started;
    let failed = null;
    started.on('error', (error) => { failed = error; });
    started.on('close', (status) => {
      if (child === started) child = null;
      if (interrupted) return leave();
      if (failed) log(`${command}: ${failed.message}`);
      resolve(status ?? 1);
    });
  });
  return { run, finish };
}

/**
 * A test file run without the runner (`node --import tsx --test <file>`, `npx tsx --test <file>`)
 * gets a home of its own too: every test file imports test/helpers/own-home.ts first, which calls
 * this. Under the runner (LEGION_TEST_HOME_ROOT set) it does nothing; otherwise it makes a home,
 * moves this process's environment into it (the processes it starts follow), and removes it when
 * the process exits or is interrupted (kept with LEGION_TEST_KEEP_HOME=1).
 */
export function adoptTestHome(proc = process) {
  if (proc.env.LEGION_TEST_HOME_ROOT) return null;
  const home = makeTestHome(proc.env);
  const keep = proc.env.LEGION_TEST_KEEP_HOME === '1';
  for (const name of Object.keys(proc.env)) if (!(name in home.env)) delete proc.env[name];
  Object.assign(proc.env, home.env, { FORCE_COLOR: '0', LEGION_TEST: '1' });
  const finish = () => {
    if (keep) console.error(`test folders kept: ${home.root} ${home.home}`);
    else home.cleanup();
  };
  proc.once('exit', finish);
  for (const [signal, number] of Object.entries(SIGNALS)) {
    proc.once(signal, () => {
      proc.off('exit', finish);
      finish();
      proc.exit(128 + number);
    });
  }
  return home;
}
