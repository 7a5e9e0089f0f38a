// Bundle the CLI: dist/legion.js (the entry) and dist/chunks/*.js (code loaded on demand).
//
// Start-up speed is the point (test/bench/startup.ts, budget 200 ms to the first frame):
// - Code splitting: what is reached only through `await import()` (the provider SDKs,
//   highlight.js, subcommands…) lands in its own chunk, which Node neither reads nor parses
//   until it is needed. The SDKs alone are ~1.6 MB of the ~4.6 MB.
// - Whitespace and syntax minified; identifiers kept, so stack traces (LEGION_DEBUG=1) name
//   the real functions.
// - The YAML files shipped in config/ are parsed here, by the app's own parser
//   (src/config/yaml-source.ts, through tsx), and carried in the bundle keyed by their text:
//   start-up skips parsing them (an edited file is parsed as usual).
// - zod's message locales other than English are left out (290 kB parsed at every start).
// - yoga-layout (Ink's layout engine) is patched to decode its embedded WebAssembly with
//   Buffer instead of `fetch(data: URL)`, which loads Node's whole fetch stack (~20 ms).
// - string-width (Ink's text measure) defers its ICU segmenter and emoji expression to their
//   first use and answers simple text from a table (scripts/string-width-fast.mjs, ~18 ms);
//   slice-ansi creates its segmenter at first use too (~6 ms).
//
// Tests build while other tests run the app, so a build never leaves a half-written or missing
// file behind: each output is written to a temp file and renamed into place (unchanged
// files are not touched), and chunks of earlier builds are removed only once they are an
// hour old (an app started before the build may still load them).
import { build } from 'esbuild';
import { readFile } from 'node:fs/promises';
import { chmodSync, mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';
import { patchOnce, patchStringWidth } from './string-width-fast.mjs';

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
        if (parsed) out.push(parsed);
      }
    }
  };
  walk(join(ROOT, 'config'));
  return out;
}

const result = await build({
  write: false,
  absWorkingDir: ROOT,
  entryPoints: { legion: 'bin/legion.ts' },
  outdir: DIST,
  entryNames: '[name]',
  chunkNames: 'chunks/[name]-[hash]',
  splitting: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  jsx: 'automatic',
  minifySyntax: true,
  minifyWhitespace: true,
  legalComments: 'none',
  plugins: [{
    name: 'legion-start-up',
    setup(b) {
      // ink imports react-devtools-core (and `ws`, through its devtools module) only when
      // DEV=true, but an external import would be hoisted and fail at load: bundle empty
      // stand-ins instead.
      b.onResolve({ filter: /^react-devtools-core$/ }, () => ({ path: 'react-devtools-core', namespace: 'legion-stub' }));
      b.onResolve({ filter: /^\.\/devtools\.js$/ }, (args) => (/[\\/]ink[\\/]build[\\/]/.test(args.importer) ? { path: 'ink-devtools', namespace: 'legion-stub' } : undefined));
      b.onLoad({ filter: /.*/, namespace: 'legion-stub' }, () => ({ contents: 'export default { initialize() {}, connectToDevTools() {} };', loader: 'js' }));
      // zod re-exports its ~50 message locales (290 kB, parsed at every start); Legion uses
      // only English, which zod sets itself: `z.locales` keeps `en` alone.
      b.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({ contents: "export { default as en } from './en.js';", loader: 'js' }));
      b.onLoad({ filter: /[\\/]string-width[\\/]index\.js$/ }, async (args) => ({ contents: await patchStringWidth(args.path), loader: 'js' }));
      b.onLoad({ filter: /[\\/]slice-ansi[\\/]tokenize-ansi\.js$/ }, async (args) => ({
        contents: patchOnce(
          await readFile(args.path, 'utf8'),
          "const GRAPHEME_SEGMENTER = new Intl.Segmenter(undefined, {granularity: 'grapheme'});",
          "let __legionSegmenter;\nconst GRAPHEME_SEGMENTER = { segment: (s) => (__legionSegmenter ??= new Intl.Segmenter(undefined, {granularity: 'grapheme'})).segment(s) };",
          'slice-ansi (segmenter)',
        ),
        loader: 'js',
      }));
      b.onLoad({ filter: /yoga-layout[\\/]dist[\\/]binaries[\\/]yoga-wasm-base64-esm\.js$/ }, async (args) => {
        const source = await readFile(args.path, 'utf8');
        const contents = patchOnce(
          source,
          'function ya(){return w||"function"!=typeof fetch?',
          'function ya(){w||(w=Buffer.from(H.slice(37),"base64"));return w||"function"!=typeof fetch?',
          'yoga-layout (wasm loading)',
        );
        return { contents, loader: 'js' };
      });
    },
  }],
  define: { 'process.env.NODE_ENV': '"production"', __LEGION_PARSED_YAML__: JSON.stringify(await parsedShippedYaml()) },
  banner: {
    // Some bundled CommonJS dependencies call require(); give them one.
    js: "#!/usr/bin/env node\nimport { createRequire as __legionCreateRequire } from 'node:module';\nconst require = __legionCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});

const written = new Set();
for (const file of result.outputFiles) {
  written.add(file.path);
  mkdirSync(join(file.path, '..'), { recursive: true });
  let same = false;
  try {
    same = readFileSync(file.path).equals(file.contents);
  } catch { /* new file */ }
  if (same) continue;
  const temp = `${file.path}.${process.pid}.tmp`;
  writeFileSync(temp, file.contents, { mode: 0o644 });
  renameSync(temp, file.path);
}
chmodSync(join(DIST, 'legion.js'), 0o755);
const chunks = join(DIST, 'chunks');
for (const name of readdirSync(chunks)) {
  const path = join(chunks, name);
  if (written.has(path)) continue;
  try {
    if (Date.now() - statSync(path).mtimeMs > STALE_MS) unlinkSync(path);
  } catch { /* removed meanwhile */ }
}
if (!written.has(join(DIST, 'legion.js'))) throw new Error(`build: no dist/legion.js among ${[...written].map((p) => relative(DIST, p)).join(', ')}`);
