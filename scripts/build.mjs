// Bundle the CLI: dist/legion-app-<build>.cjs (everything, one CommonJS file),
// dist/legion.js (the entry: a small loader, scripts/legion-loader.mjs, that runs the bundle
// through V8's code cache), and dist/legion (the `legion` command: starts Node from the V8
// start-up snapshot of this build, dist/legion-snapshot-<build>-<node>-<arch>.blob, else runs
// dist/legion.js; scripts/snapshot.mjs).
//
// Start-up speed is the point (test/bench/startup.ts, budget 200 ms to the first frame):
// - V8's code cache (see scripts/legion-loader.mjs): compiling the bundle is the largest
//   single cost of a start; Node 20 caches no ES module code, so the bundle is CommonJS.
// - What is reached only through `await import()` (the provider SDKs, highlight.js,
//   subcommands…) is evaluated only when first imported (esbuild's lazy module wrappers).
// - Whitespace and syntax minified; identifiers kept, so stack traces (LEGION_DEBUG=1) name
//   the real functions.
// - The YAML files shipped in config/ are parsed here, by the app's own parser
//   (src/config/yaml-source.ts, through tsx), and carried in the bundle keyed by their text:
//   start-up skips parsing them (an edited file is parsed as usual).
// - zod's message locales other than English are left out (290 kB).
// - yoga-layout (Ink's layout engine) instantiates its embedded WebAssembly synchronously
//   from a Buffer, instead of through `fetch(data: URL)` (which loads Node's whole fetch
//   stack, ~20 ms) and a top-level await (which CommonJS cannot have).
// - string-width (Ink's text measure) defers its ICU segmenter and emoji expression to their
//   first use and answers simple text from a table (scripts/string-width-fast.mjs, ~18 ms);
//   slice-ansi and ansi-tokenize (Ink's line slicer and tokenizer) split plain text without
//   ICU's grapheme segmenter, created at the first other text (scripts/grapheme-fast.mjs,
//   ~10 ms each). Ink's error screen sets up stack-utils at its first use. Ink's check for
//   control characters in every text node is one regular expression (scripts/ink-control-fast.mjs).
//
// Tests build while other tests run the app, so a build never leaves a half-written file
// behind or changes a file a running app may still read: the bundle's name carries its
// content hash (so does its code cache), each file is written to a temp file and renamed
// into place, dist/legion.js last, and bundles of earlier builds are removed only once they
// are an hour old.
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import { patchOnce } from './build-tables.mjs';
import { patchStringWidth } from './string-width-fast.mjs';
import { startPathViolations } from './start-path.mjs';
import { patchAnsiTokenize, patchSliceAnsi } from './grapheme-fast.mjs';
import { FAST_HAS_CONTROL, INK_HAS_CONTROL } from './ink-control-fast.mjs';
import { buildSnapshot, launcherScript, lazyModulesAtStart, snapshotName } from './snapshot.mjs';
import { moduleWrappers, splitLazyModules } from './lazy-modules.mjs';
import { shareInteropCopies } from './esm-interop.mjs';
import { mangleLocals } from './mangle-locals.mjs';
import { RESTATE_WASM_BINDINGS, splitRestateWasm } from './restate-wasm.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const STALE_MS = 60 * 60 * 1000;

/** `preparseYaml` (src/config/yaml-source.ts) of every config/**.yaml it accepts. */
async function parsedShippedYaml() {
  const { preparseYaml } = await tsImport('../src/config/yaml-source.ts', import.meta.url);
  const out = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.ya?ml$/.test(entry.name)) {
        const parsed = preparseYaml(readFileSync(path, 'utf8'), path);
        if (parsed) out.push({ ...parsed, name: relative(join(ROOT, 'config'), path) });
      }
    }
  };
  walk(join(ROOT, 'config'));
  return out;
}

/**
 * Code that runs `fn` (an expression) at every start: now (`now: false`: not now, the module
 * already did it), and, when the module is being evaluated into a start snapshot
 * (scripts/snapshot-entry.cjs), again once the snapshot is deserialized, before the app runs
 * (`inSnapshot: false`: only then, e.g. WebAssembly, which a snapshot cannot hold).
 */
const AT_START = (fn, { now = true, inSnapshot = true } = {}) =>
  `if (globalThis.__legionBuildingSnapshot) require('node:v8').startupSnapshot.addDeserializeCallback(${fn});\n` +
  (now ? (inSnapshot ? `(${fn})();` : `else (${fn})();`) : '');

/** A dependency's source with `edits` ([from, to, what]) applied, each exactly once. */
const patched = (edits) => async (args) => ({
  contents: edits.reduce((text, [from, to, what]) => patchOnce(text, from, to, what), await readFile(args.path, 'utf8')),
  loader: 'js',
});

/** Restate's WebAssembly, written beside the bundle (scripts/restate-wasm.mjs). */
let restateWasm = null;

const result = await build({
  write: false,
  metafile: true,
  absWorkingDir: ROOT,
  entryPoints: ['bin/legion.ts'],
  outfile: join(DIST, 'legion-app.cjs'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  jsx: 'automatic',
  minifySyntax: true,
  minifyWhitespace: true,
  legalComments: 'none',
  plugins: [{
    name: 'legion-start-up',
    setup(b) {
      // Restate's WebAssembly VM: a file beside the bundle, not 2.2 MB of base64 in every start's source.
      b.onLoad({ filter: RESTATE_WASM_BINDINGS }, async (args) => {
        const split = splitRestateWasm(await readFile(args.path, 'utf8'));
        restateWasm = split;
        return { contents: split.text, loader: 'js' };
      });
      // ink imports react-devtools-core (and `ws`, through its devtools module) only when
      // DEV=true: bundle empty stand-ins instead.
      b.onResolve({ filter: /^react-devtools-core$/ }, () => ({ path: 'react-devtools-core', namespace: 'legion-stub' }));
      b.onResolve({ filter: /^\.\/devtools\.js$/ }, (args) => (/[\\/]ink[\\/]build[\\/]/.test(args.importer) ? { path: 'ink-devtools', namespace: 'legion-stub' } : undefined));
      b.onLoad({ filter: /.*/, namespace: 'legion-stub' }, () => ({ contents: 'export default { initialize() {}, connectToDevTools() {} };', loader: 'js' }));
      // Ink's two top-level awaits only run with DEV=true (React devtools, which the bundle does not carry).
      b.onLoad({ filter: /[\\/]ink[\\/]build[\\/]reconciler\.js$/ }, patched([
        ["await import('./devtools.js');", "throw Object.assign(new Error('React devtools are not bundled'), { code: 'ERR_MODULE_NOT_FOUND' });", 'ink (devtools)'],
        ['? await loadPackageJson()', '? { name: undefined, version: undefined }', 'ink (package.json)'],
      ]));
      // Ink's error screen sets up stack-utils (its node-internals expressions) as it loads; only an error shows it.
      b.onLoad({ filter: /[\\/]ink[\\/]build[\\/]components[\\/]ErrorOverview\.js$/ }, patched([[
        'const stackUtils = new StackUtils({\n    cwd: cwd(),\n    internals: StackUtils.nodeInternals(),\n});',
        'let __legionStackUtils;\nconst stackUtils = { parseLine: (line) => (__legionStackUtils ??= new StackUtils({ cwd: cwd(), internals: StackUtils.nodeInternals() })).parseLine(line) };',
        'ink (ErrorOverview stack-utils)',
      ]]));
      // The MCP SDK's OAuth helper (pkce-challenge) falls back to import('node:crypto') on Node < 18
      // only; Node 20 has globalThis.crypto, so the fallback becomes a plain require.
      b.onLoad({ filter: /[\\/]pkce-challenge[\\/]dist[\\/]index\.node\.js$/ }, patched([
        ['import("node:crypto").then(m => m.webcrypto)', 'require("node:crypto").webcrypto', 'pkce-challenge (crypto fallback)'],
      ]));
      // zod re-exports its ~50 message locales; Legion uses only English, which zod sets itself.
      b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({ contents: "export { default as en } from './en.js';", loader: 'js' }));
      b.onLoad({ filter: /[\\/]string-width[\\/]index\.js$/ }, async (args) => ({ contents: await patchStringWidth(args.path), loader: 'js' }));
      b.onLoad({ filter: /[\\/]@alcalzone[\\/]ansi-tokenize[\\/]build[\\/]tokenize\.js$/ }, async (args) => ({ contents: await patchAnsiTokenize(args.path), loader: 'js' }));
      // Ink's check for control characters in every text node, by one regular expression (scripts/ink-control-fast.mjs).
      b.onLoad({ filter: /[\\/]ink[\\/]build[\\/]ansi-tokenizer\.js$/ }, patched([[INK_HAS_CONTROL, FAST_HAS_CONTROL, 'ink (control characters by one regular expression)']]));
      b.onLoad({ filter: /[\\/]slice-ansi[\\/]tokenize-ansi\.js$/ }, async (args) => ({ contents: await patchSliceAnsi(args.path), loader: 'js' }));
      // Emscripten's hook for custom instantiation, filled with a synchronous one (H is the data: URL of the WebAssembly).
      b.onLoad({ filter: /[\\/]yoga-layout[\\/]dist[\\/]binaries[\\/]yoga-wasm-base64-esm\.js$/ }, patched([[
        'if(h.instantiateWasm)try{return h.instantiateWasm(d,',
        'if(h.instantiateWasm||(h.instantiateWasm=function(i,done){var m=new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(H.slice(H.indexOf(",")+1),"base64")),i);done(m);return m.exports}))try{return h.instantiateWasm(d,',
        'yoga-layout (wasm instantiation)',
      ]]));
      // What a module computes from the terminal and the environment as it loads, computed again
      // once a start snapshot is deserialized (scripts/snapshot-entry.cjs): chalk's colour level,
      // and ansi-escapes' terminal checks.
      b.onLoad({ filter: /[\\/]chalk[\\/]source[\\/]vendor[\\/]supports-color[\\/]index\.js$/ }, patched([[
        'const supportsColor = {\n\tstdout: createSupportsColor({isTTY: tty.isatty(1)}),\n\tstderr: createSupportsColor({isTTY: tty.isatty(2)}),\n};',
        `const supportsColor = {};\nconst detectColor = () => {\n\tsupportsColor.stdout = createSupportsColor({isTTY: tty.isatty(1)});\n\tsupportsColor.stderr = createSupportsColor({isTTY: tty.isatty(2)});\n};\n${AT_START('detectColor')}`,
        'chalk (supports-color at start)',
      ]]));
      b.onLoad({ filter: /[\\/]chalk[\\/]source[\\/]index\.js$/ }, patched([
        ['const {stdout: stdoutColor, stderr: stderrColor} = supportsColor;', 'let {stdout: stdoutColor, stderr: stderrColor} = supportsColor;', 'chalk (colour support read again at start)'],
        ['export const chalkStderr = createChalk({level: stderrColor ? stderrColor.level : 0});',
          `export const chalkStderr = createChalk({level: stderrColor ? stderrColor.level : 0});\n${AT_START('() => {\n\t({stdout: stdoutColor, stderr: stderrColor} = supportsColor);\n\tchalk.level = stdoutColor ? stdoutColor.level : 0;\n\tchalkStderr.level = stderrColor ? stderrColor.level : 0;\n}', { now: false })}`,
          'chalk (levels at start)'],
      ]));
      b.onLoad({ filter: /[\\/]ansi-escapes[\\/]base\.js$/ }, patched([
        ['const isTerminalApp = !isBrowser && process.env.TERM_PROGRAM === \'Apple_Terminal\';', 'let isTerminalApp;', 'ansi-escapes (Terminal.app)'],
        ["const isTmux = !isBrowser && (process.env.TERM?.startsWith('screen') || process.env.TERM?.startsWith('tmux') || process.env.TMUX !== undefined);", 'let isTmux;', 'ansi-escapes (tmux)'],
        ["export const cursorSavePosition = isTerminalApp ? '\\u001B7' : ESC + 's';\nexport const cursorRestorePosition = isTerminalApp ? '\\u001B8' : ESC + 'u';",
          `export let cursorSavePosition;\nexport let cursorRestorePosition;\nconst readTerminal = () => {\n\tisTerminalApp = !isBrowser && process.env.TERM_PROGRAM === 'Apple_Terminal';\n\tisTmux = !isBrowser && (process.env.TERM?.startsWith('screen') || process.env.TERM?.startsWith('tmux') || process.env.TMUX !== undefined);\n\tcursorSavePosition = isTerminalApp ? '\\u001B7' : ESC + 's';\n\tcursorRestorePosition = isTerminalApp ? '\\u001B8' : ESC + 'u';\n};\n${AT_START('readTerminal')}`,
          'ansi-escapes (terminal read at start)'],
      ]));
      b.onLoad({ filter: /[\\/]yoga-layout[\\/]dist[\\/]src[\\/]index\.js$/ }, patched([[
        'const Yoga = wrapAssembly(await loadYoga());',
        // In a V8 startup snapshot (scripts/snapshot-entry.js) there is no WebAssembly: the object Ink
        // imports is filled once the snapshot is deserialized, before the app runs.
        `const Yoga = {};\nconst startYoga = () => {\n  const yogaModule = {};\n  loadYoga(yogaModule).catch(() => undefined);\n  if (!yogaModule.calledRun) throw new Error('yoga-layout did not start');\n  Object.assign(Yoga, wrapAssembly(yogaModule));\n};\n${AT_START('startYoga', { inSnapshot: false })}`,
        'yoga-layout (top-level await)',
      ]]));
    },
  }],
  define: {
    'process.env.NODE_ENV': '"production"',
    'import.meta.url': '__legionImportMetaUrl',
    __LEGION_PARSED_YAML__: JSON.stringify(await parsedShippedYaml()),
  },
  logLevel: 'warning',
});

/** Write `contents` to `path` through a temp file and a rename, unless it is there already. */
function put(path, contents, mode = 0o644) {
  try {
    if (readFileSync(path).equals(Buffer.from(contents))) return;
  } catch { /* new file */ }
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, contents, { mode });
  renameSync(temp, path);
  chmodSync(path, mode);
}

if (process.env.LEGION_METAFILE) writeFileSync(process.env.LEGION_METAFILE, JSON.stringify(result.metafile));
const [bundle] = result.outputFiles;
if (!bundle || result.outputFiles.length !== 1) throw new Error(`build: expected one output file, got ${result.outputFiles.length}`);
const dynamic = Object.values(result.metafile.outputs).flatMap((o) => o.imports).filter((i) => i.kind === 'dynamic-import');
if (dynamic.length > 0) {
  throw new Error(`build: the bundle still imports ${dynamic.map((i) => i.path).join(', ')} with import(), which vm.Script cannot run: bundle it`);
}
const eager = startPathViolations(result.metafile, 'bin/legion.ts');
if (eager.length > 0) throw new Error(`build: a start would evaluate code it must not (import it with await import() where it is used):\n  ${eager.join('\n  ')}`);
// One interop copy per CommonJS module or built-in, not one per importer (scripts/esm-interop.mjs).
// esbuild escapes non-ASCII characters everywhere but in regular expression literals; one such
// character would make V8 hold the whole source as two-byte text (6 MB instead of 3). `\uXXXX`
// means the same there (also in u and v mode, where an escaped surrogate pair is one character).
// Then its local names shortened, function and class names kept (scripts/mangle-locals.mjs).
const ascii = mangleLocals(shareInteropCopies(bundle.text).replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
// The file holds the wrapper the loader compiles (Node's CommonJS parameters, plus what stands
// for `import.meta.url` and the loader's hooks), so the loader makes no copy of 3 MB of text.
const wrapApp = (text) => `(function (exports, require, module, __filename, __dirname, __legionImportMetaUrl, __legionStart) {${text}\n})`;
mkdirSync(DIST, { recursive: true });
// The code of modules a start never evaluates goes to dist/legion-lazy-<hash>.js, read at their
// first evaluation (scripts/lazy-modules.mjs): first every module's, to list those the snapshot
// builder (what a start evaluates) reads, then all but those.
const wrappers = moduleWrappers(ascii);
const listing = splitLazyModules(ascii, wrappers, new Set());
const listingApp = join(DIST, `legion-app-listing.${process.pid}.tmp.cjs`);
let atStart;
try {
  writeFileSync(join(DIST, listing.name), listing.lazy);
  writeFileSync(listingApp, wrapApp(listing.main));
  atStart = new Set(lazyModulesAtStart({ app: listingApp, loader: join(DIST, 'legion.js') }).map((i) => listing.moved[i]));
} finally {
  rmSync(listingApp, { force: true });
  rmSync(join(DIST, listing.name), { force: true });
}
const split = splitLazyModules(ascii, wrappers, atStart);
const app = wrapApp(split.main);
const buildId = createHash('sha256').update(app).digest('hex').slice(0, 16);
const appName = `legion-app-${buildId}.cjs`;
if (!restateWasm) throw new Error('build: the bundle no longer carries restate-sdk\'s wasm bindings (scripts/restate-wasm.mjs)');
put(join(DIST, restateWasm.name), restateWasm.bytes);
put(join(DIST, split.name), split.lazy);
put(join(DIST, appName), app);
const loader = readFileSync(join(ROOT, 'scripts', 'legion-loader.mjs'), 'utf8');
put(
  join(DIST, 'legion.js'),
  patchOnce(patchOnce(loader, "'__LEGION_BUILD_ID__'", `'${buildId}'`, 'loader (build id)'), "'legion-app.cjs'", `'${appName}'`, 'loader (bundle name)'),
  0o755,
);
// The start-up snapshot and the `legion` command that starts from it (scripts/snapshot.mjs). Not
// for a package (--prune, npm pack's prepack): a blob serves only the Node that made it, so
// the package's launcher starts the plain bundle. LEGION_SNAPSHOT=0: no snapshot.
const prune = process.argv.includes('--prune');
const blobName = !prune && process.env.LEGION_SNAPSHOT !== '0' ? snapshotName(buildId) : null;
if (blobName) buildSnapshot({ app: join(DIST, appName), loader: join(DIST, 'legion.js'), blob: join(DIST, blobName) });
put(join(DIST, 'legion'), launcherScript(blobName ? { dist: DIST, blob: join(DIST, blobName) } : {}), 0o755);
// Built now, even when nothing changed (scripts/start.mjs and the tests compare its time with the sources').
const now = new Date();
utimesSync(join(DIST, 'legion.js'), now, now);
utimesSync(join(DIST, 'legion'), now, now);

// Bundles and snapshots of earlier builds (and the chunks of the earlier split build), once an
// hour old; with --prune (npm pack's prepack) at once, so the package holds only this build.
const stale = (path) => {
  if (prune) return true;
  try {
    return Date.now() - statSync(path).mtimeMs > STALE_MS;
  } catch {
    return false;
  }
};
for (const name of readdirSync(DIST)) {
  if (/^legion-app-[0-9a-f]+\.cjs$/.test(name) && name !== appName && stale(join(DIST, name))) unlinkSync(join(DIST, name));
  if (/^legion-restate-[0-9a-f]+\.wasm$/.test(name) && name !== restateWasm.name && stale(join(DIST, name))) unlinkSync(join(DIST, name));
  if (/^legion-lazy-[0-9a-f]+\.js$/.test(name) && name !== split.name && stale(join(DIST, name))) unlinkSync(join(DIST, name));
  const blob = /^(legion-snapshot-[0-9a-f]+-.+\.blob)(\.node)?$/.exec(name)?.[1];
  if (blob && blob !== blobName && stale(join(DIST, blob))) rmSync(join(DIST, name), { force: true });
}
const chunks = join(DIST, 'chunks');
if (existsSync(chunks)) {
  for (const name of readdirSync(chunks)) if (stale(join(chunks, name))) unlinkSync(join(chunks, name));
  if (readdirSync(chunks).length === 0) rmSync(chunks, { recursive: true, force: true });
}
