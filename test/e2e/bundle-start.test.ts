import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cleanAppEnv, ensureBundle as ensureBuilt } from '../helpers/bundle';
import { hasTmux, shellCommand, startTmux } from '../helpers/tmux';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * The start path of the built CLI (scripts/build.mjs, scripts/legion-loader.mjs,
 * test/bench/startup.ts): what the bundle evaluates only on demand, what the build patched,
 * and the loader's code cache.
 */
const ROOT = process.cwd();
const DIST = resolve(ROOT, 'dist');
const BUNDLE = join(DIST, 'legion.js');
const ensureBundle = (): void => ensureBuilt({ e2e: true });

/** The bundle the entry loads (its name carries its hash). */
function appBundle(): string {
  const name = /'(legion-app-[0-9a-f]+\.cjs)'/.exec(readFileSync(BUNDLE, 'utf8'))?.[1];
  assert.ok(name, 'dist/legion.js names its bundle');
  return join(DIST, name);
}

test('bundle: the provider SDKs, highlight.js and the TUI are evaluated on demand; the start-up patches are in', () => {
  ensureBundle();
  const text = readFileSync(appBundle(), 'latin1');
  // esbuild's lazy module wrappers: `init_x = __esm({"path"() {…}})`, run at the first import().
  // One a start evaluates stays in the bundle (the TUI's, in the snapshot); one no start evaluates
  // has its wrapper's method in the lazy part (`({"path"() {…}})["path"]`, scripts/lazy-modules.mjs),
  // its key no longer in the bundle.
  // (A checkout whose node_modules is a link elsewhere names them by a relative path, ../../main/node_modules/….)
  const lazyName = /"(legion-lazy-[0-9a-f]+\.js)"/.exec(text)?.[1];
  assert.ok(lazyName, 'the bundle names its lazy part');
  const lazy = readFileSync(join(DIST, lazyName), 'latin1');
  const wrapped = (source: string, path: string, opening: string): boolean => {
    const at = source.indexOf(`${path}"(){`);
    const wrapper = source.lastIndexOf(opening, at);
    return at > 0 && wrapper >= 0 && /^(\.\.\/)*([\w.-]+\/)*$/.test(source.slice(wrapper + opening.length, at));
  };
  for (const path of ['node_modules/@anthropic-ai/sdk/client.mjs', 'node_modules/openai/client.mjs', 'node_modules/@restatedev/restate-sdk/dist/index.js', 'components/markdown/highlight-core.ts', 'src/cli/commands/worker.ts', 'src/cli/commands/doctor.ts']) {
    assert.ok(wrapped(lazy, path, '({"'), `${path} is evaluated on demand, from the lazy part`);
    assert.ok(!text.includes(`${path}"`), `${path}'s code is not in the bundle`);
  }
  assert.ok(wrapped(text, 'components/start-tui.tsx', '__esm({"'), 'the TUI is evaluated on demand');
  assert.match(text, /^\(function \(exports, require, module, __filename, __dirname, __legionImportMetaUrl, __legionStart\) \{/, 'the file is the wrapper the loader compiles');
  assert.match(text, /^[\x00-\x7f]*$/, 'ASCII only (one-byte source in V8)');
  assert.doesNotMatch(text, /Ungültige Eingabe|Nieprawidłow|\\u00fcltige/, "zod's foreign locales are not bundled");
  assert.match(text, /__legionWidths/, 'string-width is patched');
  assert.match(text, /__legionStackUtils\s*\?\?=/, "Ink's error screen sets up stack-utils at its first use");
  assert.match(text, /__legionSimple/, 'ansi-tokenize splits plain text without ICU\'s segmenter');
  // The patched function's `h` is a parameter: the build shortens local names (scripts/mangle-locals.mjs).
  assert.match(text, /\b([\w$]+)\.instantiateWasm\|\|\(\1\.instantiateWasm=function\([\w$]+,[\w$]+\)\{var [\w$]+=new WebAssembly\.Instance\(new WebAssembly\.Module\(Buffer\.from\(/, 'yoga instantiates its WebAssembly synchronously');
  assert.match(text, /claude-sonnet-5-5/, 'the shipped YAML is pre-parsed into the bundle');
});

test('bundle: the code cache is written once per kind, reused, rewritten when damaged, and skipped when unsafe or turned off', () => {
  ensureBundle();
  const dir = mkdtempSync(join(tmpdir(), 'legion-cache-test-'));
  const cacheDir = join(dir, 'cache');
  const run = (env: Record<string, string> = {}) => {
    const r = spawnSync(process.execPath, [BUNDLE, '--version'], { encoding: 'utf8', timeout: 20_000, env: { ...process.env, LEGION_CACHE_DIR: cacheDir, ...env } });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^legion \d+\.\d+\.\d+/);
  };
  const files = (): string[] => { try { return readdirSync(cacheDir).sort(); } catch { return []; } };
  try {
    run({ LEGION_COMPILE_CACHE: '0' });
    assert.deepEqual(files(), [], 'LEGION_COMPILE_CACHE=0 writes nothing');
    run();
    const [file, ...rest] = files();
    assert.ok(file && rest.length === 0, `one cache file: ${files().join(', ')}`);
    assert.match(file, /^compile-[0-9a-f]{16}-v\d+\.\d+\.\d+-\w+-cli\.bin$/);
    assert.equal(statSync(cacheDir).mode & 0o777, 0o700);
    const first = readFileSync(join(cacheDir, file));
    const mtime = statSync(join(cacheDir, file)).mtimeMs;
    run();
    assert.equal(statSync(join(cacheDir, file)).mtimeMs, mtime, 'an accepted cache is not rewritten');
    writeFileSync(join(cacheDir, file), Buffer.alloc(first.length, 7));
    run();
    assert.ok(!readFileSync(join(cacheDir, file)).equals(Buffer.alloc(first.length, 7)), 'a damaged cache is rejected by V8 and rewritten');
    rmSync(join(cacheDir, file));
    chmodSync(cacheDir, 0o777);
    run();
    assert.deepEqual(files(), [], 'a directory others may write to is not used');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bundle: a start of the full-screen UI writes the `tui` cache when it ends, by quitting or by a hangup; the next start uses it', { skip: !hasTmux() && 'tmux is not installed', timeout: 60_000 }, async () => {
  ensureBundle();
  const dir = mkdtempSync(join(tmpdir(), 'legion-cache-tui-'));
  const cacheDir = join(dir, 'cache');
  const command = shellCommand([process.execPath, BUNDLE, '--cwd', dir]);
  const tmux = startTmux({ command, cwd: dir, env: cleanAppEnv({ LEGION_CACHE_DIR: cacheDir }), width: 100, height: 30 });
  const tuiCache = (): string[] => { try { return readdirSync(cacheDir).filter((n) => n.endsWith('-tui.bin')); } catch { return []; } };
  try {
    await tmux.waitFor(/legion · .*DEMO/, 15_000, 'the first frame');
    assert.deepEqual(tuiCache(), [], 'nothing is written before the end');
    tmux.keys('C-c', 'C-c');
    await tmux.waitFor(() => tmux.dead(), 10_000, 'the app to quit');
    const [file] = tuiCache();
    assert.ok(file, 'quitting wrote the tui cache');
    const mtime = statSync(join(cacheDir, file)).mtimeMs;
    tmux.respawn(command);
    await tmux.waitFor(/legion · .*DEMO/, 15_000, 'the first frame, from the cache');
    tmux.respawn(command); // a hangup (SIGHUP) of the running app
    await tmux.waitFor(/legion · .*DEMO/, 15_000, 'the first frame, again');
    assert.equal(statSync(join(cacheDir, file)).mtimeMs, mtime, 'a start that used the cache does not rewrite it');
    rmSync(join(cacheDir, file));
    tmux.respawn(command); // hangs up the app that found the cache: it writes nothing
    await tmux.waitFor(/legion · .*DEMO/, 15_000, 'the first frame, with no cache');
    tmux.respawn(command); // hangs up the app that found no cache: it writes it before it goes (respawn waits until it is gone)
    assert.equal(tuiCache().length, 1, 'a hangup wrote the tui cache');
    await tmux.waitFor(/legion · .*DEMO/, 15_000, 'the first frame, once more');
    tmux.keys('C-c', 'C-c');
    await tmux.waitFor(() => tmux.dead(), 10_000, 'the app to quit');
  } finally {
    tmux.kill(); // waits until the app is gone
    rmSync(dir, { recursive: true, force: true });
  }
});

test('bundle: `legion rules list` works from the bundle and keeps the rules\' source lines', () => {
  ensureBundle();
  const rules = spawnSync(process.execPath, [BUNDLE, 'rules', 'list', '--cwd', ROOT], { encoding: 'utf8', timeout: 20_000 });
  assert.equal(rules.status, 0, rules.stderr);
  assert.match(rules.stdout, /config[\\/]rules\.yaml\n\s+\d+\s+\S+/);
});

test("bundle: Restate's WebAssembly is a file beside the bundle, not base64 in every start's source; `legion worker` loads it, from the bundle and from the snapshot", { timeout: 60_000 }, async () => {
  ensureBundle();
  const text = readFileSync(appBundle(), 'latin1');
  assert.doesNotMatch(text, /__wasm_base64__\s*=\s*"/, 'no base64 WebAssembly literal in the bundle');
  const name = /"(legion-restate-[0-9a-f]{16}\.wasm)"/.exec(text)?.[1];
  assert.ok(name, 'the bundle names its Restate WebAssembly file');
  assert.equal(readFileSync(join(DIST, name)).subarray(0, 4).toString('latin1'), '\0asm', `${name} is a WebAssembly module`);
  // The worker evaluates the Restate SDK, whose bindings instantiate the module as they load: it
  // prints its endpoint only when that worked. Both ways a start runs: the plain bundle and the
  // launcher (the snapshot's wrapper keeps the build's dist/ as __dirname).
  const dir = mkdtempSync(join(tmpdir(), 'legion-restate-wasm-'));
  try {
    for (const command of [[process.execPath, BUNDLE], [join(DIST, 'legion')]]) {
      const [file, ...args] = command as [string, ...string[]];
      const child = spawn(file, [...args, 'worker', '--no-register', '--admin', 'http://127.0.0.1:9', '--identity-key', 'publickeyv1_5BYGELEnryj4UE99cU1PR7WdQ6G5EMsbbikyEHmvi3uN', '--listen', '127.0.0.1:0'], { cwd: dir, env: cleanAppEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const url = await new Promise<string>((resolveUrl, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const line = /^(http:\/\/127\.0\.0\.1:\d+)\n/m.exec(out);
          if (line) resolveUrl(line[1]!);
        });
        child.on('exit', (code) => reject(new Error(`${command.join(' ')} worker exited (${code}) before serving: ${stderr}`)));
      });
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const ended = new Promise((r) => child.on('exit', r));
      child.kill('SIGTERM');
      await ended;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
