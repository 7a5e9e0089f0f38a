// The V8 start-up snapshot of a build and the launcher that starts from it
// (docs/performance.md#start-up). Used by scripts/build.mjs.
//
// dist/legion-snapshot-<build>-<node version>-<arch>.blob: the heap after the app bundle and
// the UI's modules evaluated (scripts/snapshot-entry.cjs), made by the `node` that runs the
// build. Node can start only from a snapshot made by the same Node build (another one exits
// with an error, a truncated file crashes it), so the blob is written to a temp file and
// renamed into place, and beside it `<blob>.node` carries the modification time of the node
// binary that made it: the launcher uses the blob only when the `node` it finds has exactly
// that time (an upgraded Node is another file, with another time), else the plain bundle.
//
// dist/legion: the `legion` command, a POSIX shell script (the snapshot flag must be on node's
// command line). It forks nothing on the way to `exec node`: PATH is searched and the files are
// tested with the shell's built-ins.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { builtinsInSnapshot, withoutCodeCacheOf } from './snapshot-code-cache.mjs';

const ENTRY = fileURLToPath(new URL('./snapshot-entry.cjs', import.meta.url));

/**
 * V8 flags the snapshot is built with, and every start from it is given (V8 refuses a snapshot
 * to a start with other flags: exit 14). A start deserializes ~17 MB of old generation; with
 * V8's default, its first scavenges lower the old generation's limit to about that size and a
 * full mark-compact runs before the first frame (~15–25 ms, with incremental marking steps on
 * the main thread). A configured initial limit is not lowered: no full GC before the frame;
 * later limits come from the live size as usual (RSS after start unchanged). A start from the
 * snapshot removes them from `process.execArgv` (scripts/snapshot-entry.cjs): processes it
 * starts run the plain bundle, whose code cache holds the default flags.
 *
 * `--no-rehash-snapshot`: by default V8 gives each start a new random hash seed and rehashes
 * every string and hash table it deserializes (~22,000 strings, the top-level scope's names,
 * ~1,600 dictionaries: ~10 ms of CPU per start, docs/decisions/startup.md). Without it, the
 * starts keep the seed the snapshot was built with: random per build and machine (the builder's
 * own), not one for every install (a package carries no blob), but the same for every start of
 * a build. What the seed guards against is hash flooding, which needs the seed (readable only
 * in the blob); a rebuild draws a new one.
 */
export const SNAPSHOT_V8_FLAGS = ['--initial-old-space-size=64', '--no-rehash-snapshot'];

/** The blob's file name for a build and the running Node. */
export const snapshotName = (buildId) => `legion-snapshot-${buildId}-${process.version}-${process.arch}.blob`;

/** The stamp beside a blob: its modification time is the one of the node binary that made the blob. */
export const stampOf = (blob) => `${blob}.node`;

/**
 * Make `blob` from the bundle `app` (`loader` is the plain entry, dist/legion.js, which a start
 * from the snapshot reports as argv[1]). Throws with the builder's output when it fails: a
 * module read the build machine's state while it evaluated, or Node could not snapshot the heap.
 */
export function buildSnapshot({ app, loader, blob }) {
  const temp = `${blob}.${process.pid}.tmp`;
  // An empty environment, in /: nothing of the builder's shell can end up in the heap.
  const r = spawnSync(process.execPath, [...SNAPSHOT_V8_FLAGS, '--snapshot-blob', temp, '--build-snapshot', ENTRY, app, loader, JSON.stringify(lazyBuiltins())], {
    cwd: '/',
    env: {},
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
  if (r.status !== 0 || !existsSync(temp)) {
    rmSync(temp, { force: true });
    // Node warns that some built-ins are "not yet fully verified" in a snapshot: tried here (the tests start from it).
    const output = `${r.stdout}${r.stderr}`.split('\n').filter((l) => !/not yet fully verified|may still work in some cases|To request support for the module|--trace-warnings/.test(l)).join('\n').trim();
    throw new Error(`build: the start-up snapshot failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`}):\n${output}`);
  }
  // The build composes a throwaway run in a temporary folder (src/cli/warm-compose.ts): no byte of it (the folder, the run's id) may be in the blob.
  const written = readFileSync(temp);
  const leaked = /legion-warm-compose-[A-Za-z0-9]{6}|\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-[a-z0-9]{6}/.exec(written.toString('latin1'));
  if (leaked) {
    rmSync(temp, { force: true });
    throw new Error(`build: the start-up snapshot holds bytes of the warm-up's throwaway run (${leaked[0]}): something kept them (src/cli/warm-compose.ts)`);
  }
  // Node's code cache of the built-ins the heap already holds: never used by a start, read at
  // every one (scripts/snapshot-code-cache.mjs). A blob not laid out as Node 20 writes it (a
  // later Node) stays as Node wrote it.
  let loaded;
  try {
    loaded = builtinsInSnapshot({ node: process.execPath, flags: SNAPSHOT_V8_FLAGS, blob: temp, temp });
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  let trimmed;
  try {
    trimmed = withoutCodeCacheOf(written, loaded).blob;
  } catch {
    trimmed = undefined;
  }
  if (trimmed) writeFileSync(temp, trimmed);
  // A start from it, before it is put in place: V8 refuses a snapshot written with other flags
  // than a start has (e.g. one a module set while it evaluated), and the launcher must never
  // hand node a blob it refuses.
  const check = spawnSync(process.execPath, [...SNAPSHOT_V8_FLAGS, '--snapshot-blob', temp, '--', '--version'], { cwd: '/', encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
  if (check.status !== 0) {
    rmSync(temp, { force: true });
    throw new Error(`build: a start from the new start-up snapshot failed (${check.error?.message ?? `exit ${check.status ?? check.signal}`}): ${`${check.stdout}${check.stderr}`.trim().slice(0, 2000)}`);
  }
  renameSync(temp, blob);
  // The node binary's exact time (touch copies it to the nanosecond, which the shell's -nt compares).
  const touch = spawnSync('touch', ['-r', process.execPath, stampOf(blob)]);
  if (touch.status !== 0) rmSync(stampOf(blob), { force: true });
}

/**
 * The indices of the modules of `app`'s lazy part (scripts/lazy-modules.mjs) that evaluating it
 * for a snapshot reads (what a start evaluates): the builder run as for `buildSnapshot`, in its
 * `list-lazy` mode, which writes no snapshot.
 */
export function lazyModulesAtStart({ app, loader }) {
  const temp = `${app}.${process.pid}.list.blob`;
  const r = spawnSync(process.execPath, [...SNAPSHOT_V8_FLAGS, '--snapshot-blob', temp, '--build-snapshot', ENTRY, app, loader, JSON.stringify(lazyBuiltins()), 'list-lazy'], {
    cwd: '/',
    env: {},
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });
  rmSync(temp, { force: true });
  const listed = /^lazy-loaded: (\[[0-9,]*\])$/m.exec(r.stdout ?? '');
  if (r.status !== 0 || !listed) {
    throw new Error(`build: listing the modules a start evaluates failed (${r.error?.message ?? `exit ${r.status ?? r.signal}`}):\n${`${r.stdout}${r.stderr}`.trim().slice(0, 4000)}`);
  }
  return JSON.parse(listed[1]);
}

/** The built-ins a Node 20 snapshot cannot hold (scripts/snapshot-entry.cjs), with their export names. */
function lazyBuiltins() {
  const load = createRequire(import.meta.url);
  return Object.fromEntries(['http', 'https', 'http2'].map((id) => [id, Object.getOwnPropertyNames(load(`node:${id}`))]));
}

const quote = (s) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The launcher (dist/legion). With `dist` and `blob`: starts from `blob` when it and its stamp
 * are there and the `node` on PATH has the stamp's time, else `node <dist>/legion.js`. Without
 * (an npm package, which carries no blob: it would be another machine's Node): `legion.js`
 * beside the launcher's real path. LEGION_SNAPSHOT=0 turns the snapshot off; so does any
 * NODE_OPTIONS (V8 flags there would make node refuse the snapshot, exit 14).
 */
export function launcherScript({ dist, blob } = {}) {
  const lines = [
    '#!/bin/sh',
    '# legion: written by scripts/build.mjs (scripts/snapshot.mjs; docs/performance.md#start-up).',
    '# Starts Node from the V8 start-up snapshot of this build when the `node` on PATH is the one',
    '# that made it, else the plain bundle (legion.js). LEGION_SNAPSHOT=0: never the snapshot.',
    'node=',
    'saved_ifs=$IFS',
    'IFS=:',
    'set -f',
    'for dir in $PATH; do',
    '  if [ -f "${dir:-.}/node" ] && [ -x "${dir:-.}/node" ]; then node=${dir:-.}/node; break; fi',
    'done',
    'set +f',
    'IFS=$saved_ifs',
    '[ -n "$node" ] || node=node',
  ];
  if (dist && blob) {
    const stamp = stampOf(blob);
    lines.push(
      // NODE_OPTIONS may hold V8 flags (--max-old-space-size…): node refuses a snapshot made with other flags.
      `if [ "$LEGION_SNAPSHOT" != 0 ] && [ -z "$NODE_OPTIONS" ] && [ -f ${quote(blob)} ] && [ -f ${quote(stamp)} ] && ! [ "$node" -nt ${quote(stamp)} ] && ! [ "$node" -ot ${quote(stamp)} ]; then`,
      `  exec "$node" ${SNAPSHOT_V8_FLAGS.map(quote).join(' ')} --snapshot-blob ${quote(blob)} -- "$@"`,
      'fi',
      `if [ -f ${quote(join(dist, 'legion.js'))} ]; then exec "$node" ${quote(join(dist, 'legion.js'))} "$@"; fi`,
    );
  }
  lines.push(
    'self=$(readlink -f "$0" 2>/dev/null) || self=$0',
    'exec "$node" "${self%/*}/legion.js" "$@"',
    '',
  );
  return lines.join('\n');
}
