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
  // ink imports react-devtools-core only when DEV=true, but an external import would be
  // hoisted and fail at load: bundle an empty stand-in instead.
  plugins: [{
    name: 'no-react-devtools',
    setup(b) {
      b.onResolve({ filter: /^react-devtools-core$/ }, () => ({ path: 'react-devtools-core', namespace: 'legion-stub' }));
      b.onLoad({ filter: /.*/, namespace: 'legion-stub' }, () => ({ contents: 'export default { initialize() {}, connectToDevTools() {} };', loader: 'js' }));
    },
  }],
  define: { 'process.env.NODE_ENV': '"production"' },
  banner: {
    // Some bundled CommonJS dependencies call require(); give them one.
    js: "#!/usr/bin/env node\nimport { createRequire as __legionCreateRequire } from 'node:module';\nconst require = __legionCreateRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
chmodSync('dist/legion.js', 0o755);
