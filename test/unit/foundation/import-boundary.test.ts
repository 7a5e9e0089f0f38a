import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { build } from 'esbuild';
import { withTempDir } from '../../helpers/tmp';

/**
 * The headless core (src/) never imports ink, react, ink-testing-library or components/
 * (docs/design.md#layout). Two independent checks per file: esbuild's own import graph (static and
 * literal dynamic imports, re-exports, require) and a text scan that also catches
 * imports esbuild would not see (non-literal dynamic imports of a forbidden name).
 */
const FORBIDDEN_PACKAGES = ['ink', 'react', 'ink-testing-library'];

function isForbidden(specifier: string, fromFile: string, root: string): boolean {
  const bare = specifier.replace(/^node:/, '');
  if (FORBIDDEN_PACKAGES.some((p) => bare === p || bare.startsWith(`${p}/`))) return true;
  if (bare.startsWith('.')) {
    const target = relative(root, resolve(fromFile, '..', bare));
    return target === 'components' || target.startsWith(`components${sep}`);
  }
  return /(^|\/)components(\/|$)/.test(bare);
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(m|c)?[jt]sx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const SPECIFIER_PATTERNS = [
  /\b(?:import|export)\s[^'"`;]*?\sfrom\s*['"]([^'"]+)['"]/g, // import x from 'y', export { x } from 'y', import type
  /\bimport\s*['"]([^'"]+)['"]/g, // import 'y'
  /\bimport\s*\(\s*['"`]([^'"`]+)['"`]/g, // import('y')
  /\brequire\s*\(\s*['"`]([^'"`]+)['"`]/g, // require('y')
];

/** Text scan: every import-like specifier of a file. */
function scannedSpecifiers(source: string): string[] {
  // Comments out (a '//' inside a string may hide the rest of its line; esbuild still sees it).
  const text = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
  const out: string[] = [];
  for (const pattern of SPECIFIER_PATTERNS) for (const m of text.matchAll(pattern)) out.push(m[1]!);
  return out;
}

/** Forbidden imports of every source file under `srcDir` (root = the package root). */
async function violations(root: string, srcDir: string): Promise<string[]> {
  const files = sourceFiles(srcDir);
  const found = new Set<string>();
  for (const file of files) {
    for (const spec of scannedSpecifiers(readFileSync(file, 'utf8'))) {
      if (isForbidden(spec, file, root)) found.add(`${relative(root, file)} imports ${spec}`);
    }
  }
  // esbuild sees what the text scan could miss (multi-line statements, odd formatting).
  const result = await build({
    entryPoints: files, bundle: true, write: false, metafile: true, outdir: join(root, '.boundary-out'),
    platform: 'node', format: 'esm', packages: 'external', logLevel: 'silent', jsx: 'automatic',
    // Resolution failures must not hide an import: keep everything unresolved external.
    plugins: [{
      name: 'externalize-unresolved',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (a) => ({ path: a.path, external: true }));
        // A relative import of a file not written yet is tsc's business, not this test's.
        b.onResolve({ filter: /^\./ }, async (a) => {
          if (a.pluginData === 'inner') return undefined;
          const r = await b.resolve(a.path, { kind: a.kind, resolveDir: a.resolveDir, importer: a.importer, pluginData: 'inner' });
          return r.errors.length ? { path: a.path, external: true } : { path: r.path, external: r.external, namespace: r.namespace };
        });
      },
    }],
  });
  for (const [input, info] of Object.entries(result.metafile!.inputs)) {
    const file = resolve(root, input);
    if (!file.startsWith(srcDir + sep)) {
      // A relative import pulled in a file outside src/: only components/ is forbidden.
      continue;
    }
    for (const imp of info.imports) {
      const spec = imp.external ? imp.path : relative(join(file, '..'), resolve(root, imp.path)).replace(/^(?!\.)/, './');
      if (isForbidden(spec, file, root)) found.add(`${relative(root, file)} imports ${imp.original ?? spec}`);
    }
  }
  return [...found].sort();
}

test('import boundary: nothing under src/ imports ink, react, ink-testing-library or components/', async () => {
  const root = process.cwd();
  const src = join(root, 'src');
  assert.ok(sourceFiles(src).length > 10, 'src/ was found');
  assert.deepEqual(await violations(root, src), []);
});

test('import boundary: the checker catches every form of forbidden import', async () => {
  await withTempDir(async (root) => {
    await mkdir(join(root, 'src', 'ui'), { recursive: true });
    await mkdir(join(root, 'components'));
    await writeFile(join(root, 'components', 'Lane.tsx'), 'export const Lane = 1;\n');
    const files: Record<string, string> = {
      'static.ts': "import { render } from 'ink';\nexport const a = render;\n",
      'sub.ts': "import { Box } from 'ink/build/components/Box.js';\nexport const b = Box;\n",
      'react.ts': "import * as React from 'react';\nexport const c = React;\n",
      'jsx.ts': "import { jsx } from 'react/jsx-runtime';\nexport const d = jsx;\n",
      'testing.ts': "import { render } from 'ink-testing-library';\nexport const e = render;\n",
      'dynamic.ts': "export const f = () => import('ink');\n",
      'multiline.ts': "import {\n  render,\n} from\n  'ink';\nexport const g = render;\n",
      'reexport.ts': "export { Lane } from '../components/Lane';\n",
      'side.ts': "import 'react';\n",
      'required.ts': "export const h = require('react');\n",
      'ui/deep.ts': "export const i = () => import('../../components/Lane');\n",
      'missing.ts': "export { X } from '../components/NotYet';\n",
      'ok.ts': "import { join } from 'node:path';\nimport { z } from 'zod';\n// import 'ink' in a comment is not an import\n/* import('react') */\nconst url = 'http://x'; // import 'ink'\nexport const ok = [join, z, url];\n",
      'pending.ts': "import { y } from './not-written-yet';\nexport const z = y;\n",
    };
    for (const [name, text] of Object.entries(files)) await writeFile(join(root, 'src', name), text);
    const found = await violations(root, join(root, 'src'));
    const flagged = new Set(found.map((v) => v.split(' ')[0]));
    for (const name of Object.keys(files).filter((n) => n !== 'ok.ts' && n !== 'pending.ts')) assert.ok(flagged.has(join('src', name)), `${name} not flagged: ${found.join('; ')}`);
    assert.ok(!flagged.has(join('src', 'ok.ts')), found.join('; '));
    assert.ok(!flagged.has(join('src', 'pending.ts')), found.join('; '));
  });
});
