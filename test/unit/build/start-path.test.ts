import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
// @ts-expect-error: a build script (plain JS, no types)
import { startPath, startPathViolations } from '../../../scripts/start-path.mjs';

type Metafile = { inputs: Record<string, { imports: { path: string; kind: string; external?: boolean }[] }> };
const input = (...imports: [string, string?][]) => ({ imports: imports.map(([path, kind]) => ({ path, kind: kind ?? 'import-statement' })) });

/** The command table as it was: every command imported statically, `worker` pulling in the Restate SDK. */
const EAGER: Metafile = {
  inputs: {
    'bin/legion.ts': input(['src/cli/main.ts'], ['components/start-tui.tsx', 'dynamic-import']),
    'src/cli/main.ts': input(['src/cli/commands/index.ts']),
    'src/cli/commands/index.ts': input(['src/cli/commands/start.ts'], ['src/cli/commands/worker.ts']),
    'src/cli/commands/start.ts': input(),
    'src/cli/commands/worker.ts': input(['src/engine/worker.ts']),
    'src/engine/worker.ts': input(['../../main/node_modules/@restatedev/restate-sdk/dist/index.js']),
    '../../main/node_modules/@restatedev/restate-sdk/dist/index.js': input(),
    'components/start-tui.tsx': input(['node_modules/ink/build/index.js']),
    'node_modules/ink/build/index.js': input(),
  },
};

/** The same with the table loading `worker` through `await import()`. */
const LAZY: Metafile = {
  inputs: { ...EAGER.inputs, 'src/cli/commands/index.ts': input(['src/cli/commands/start.ts'], ['src/cli/commands/worker.ts', 'dynamic-import']) },
};

test('start path: the modules reached through static imports only', () => {
  assert.deepEqual(startPath(LAZY, 'bin/legion.ts'), ['bin/legion.ts', 'src/cli/main.ts', 'src/cli/commands/index.ts', 'src/cli/commands/start.ts']);
});

test('start path: a command other than start or the Restate SDK imported statically is refused, with the chain that pulls it in', () => {
  const lines = startPathViolations(EAGER, 'bin/legion.ts') as string[];
  assert.equal(lines.length, 2, lines.join('\n'));
  assert.match(lines[0]!, /^bin\/legion\.ts → src\/cli\/main\.ts → src\/cli\/commands\/index\.ts → src\/cli\/commands\/worker\.ts \(a command other than start/);
  assert.match(lines[1]!, /src\/engine\/worker\.ts → \.\.\/\.\.\/main\/node_modules\/@restatedev\/restate-sdk\/dist\/index\.js \(the Restate SDK/);
  assert.deepEqual(startPathViolations(LAZY, 'bin/legion.ts'), []);
});

test('start path: the TUI and provider SDKs imported statically are refused', () => {
  const meta: Metafile = { inputs: { ...LAZY.inputs, 'bin/legion.ts': input(['src/cli/main.ts'], ['components/start-tui.tsx'], ['node_modules/openai/index.mjs']), 'node_modules/openai/index.mjs': input() } };
  const lines = startPathViolations(meta, 'bin/legion.ts') as string[];
  assert.ok(lines.some((l) => l.startsWith('bin/legion.ts → components/start-tui.tsx (the TUI')), lines.join('\n'));
  assert.ok(lines.some((l) => l.includes('node_modules/openai/index.mjs (a provider SDK')), lines.join('\n'));
});

test('start path: node:http, node:https, node:tls or node:zlib imported statically is refused (the first model request loads them)', () => {
  const external = (path: string) => ({ path, kind: 'import-statement', external: true });
  const withFetch = (imports: { path: string; kind: string; external?: boolean }[]): Metafile => ({
    inputs: { ...LAZY.inputs, 'src/cli/commands/start.ts': input(['src/providers/node-fetch.ts']), 'src/providers/node-fetch.ts': { imports } },
  });
  const lines = startPathViolations(withFetch([external('node:module'), external('node:https')]), 'bin/legion.ts') as string[];
  assert.equal(lines.length, 1, lines.join('\n'));
  assert.match(lines[0]!, /src\/cli\/commands\/start\.ts → src\/providers\/node-fetch\.ts → node:https \(HTTP, TLS or compression/);
  assert.match((startPathViolations(withFetch([external('zlib')]), 'bin/legion.ts') as string[])[0]!, /→ zlib \(/);
  assert.deepEqual(startPathViolations(withFetch([external('node:module'), external('node:fs'), { path: 'node:http', kind: 'dynamic-import', external: true }]), 'bin/legion.ts'), []);
});
