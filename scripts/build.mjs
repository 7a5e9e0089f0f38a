// Bundle the CLI into one ESM file (start-up speed: one file to parse, no module resolution).
import { build } from 'esbuild';
import { mkdirSync, chmodSync } from 'node:fs';

mkdirSync('dist', { recursive: true });
await build({
  entryPoints: ['bin/legion.ts'],
  outfile: 'dist/legion.js',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  jsx: 'automatic',
  minifySyntax: true,
  legalComments: 'none',
  // ink imports react-devtools-core only when DEV=true; keep it out of the bundle.
  external: ['react-devtools-core'],
  define: { 'process.env.NODE_ENV': '"production"' },
  banner: {
    // Some bundled CommonJS dependencies call require(); give them one.
    js: "#!/usr/bin/env node\nimport { createRequire as __legionCreateRequire } from 'node:module';\nconst require = __legionCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
chmodSync('dist/legion.js', 0o755);
