import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { withTempDir } from '../helpers/tmp';

// The import graph is checked, not hoped (docs/architecture.md): dependency-cruiser with the
// rules of .dependency-cruiser.cjs, run by scripts/check-architecture.mjs in its own process.

interface Report {
  readonly modules: number;
  readonly violations: { rule: string; from: string; to: string; cycle?: string[] }[];
}

function check(root: string): { code: number | null; report: Report; stderr: string } {
  const r = spawnSync(process.execPath, ['scripts/check-architecture.mjs', '--json', '--root', root], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.error, undefined);
  return { code: r.status, report: JSON.parse(r.stdout) as Report, stderr: r.stderr };
}

test('src/, components/ and bin/ have no import cycle and no upward import', () => {
  const { code, report, stderr } = check(process.cwd());
  const lines = report.violations.map((v) => `${v.rule}: ${v.from} → ${v.to}${v.cycle ? ` (${v.cycle.join(' → ')})` : ''}`);
  assert.deepEqual(lines, [], stderr);
  assert.equal(code, 0);
  assert.ok(report.modules > 200, `the whole tree was read (${report.modules} modules)`);
});

test('the check fails on a cycle, an upward import, a runtime file importing a higher tier, the UI reaching past the core interface or onto the disk', async () => {
  await withTempDir(async (dir) => {
    const files: Record<string, string> = {
      // A cycle through a type-only import.
      'src/runtime/turn.ts': "import type { Slot } from './run-state';\nexport type Turn = { slot: Slot };\n",
      'src/runtime/run-state.ts': "import type { Turn } from './turn';\nexport type Slot = { running?: Turn };\n",
      // The bottom importing the top.
      'src/events/bus.ts': "import { createCore } from '../runtime/core';\nexport const bus = createCore;\n",
      'src/runtime/core.ts': "export const createCore = (): number => 1;\n",
      // Delegation starting a turn by importing the scheduler instead of getting it passed in.
      'src/runtime/delegation.ts': "import { enqueue } from './scheduler';\nexport const communicate = enqueue;\n",
      'src/runtime/scheduler.ts': 'export const enqueue = (): number => 1;\n',
      // A runtime file without a tier.
      'src/runtime/helper.ts': "import { enqueue } from './scheduler';\nexport const x = enqueue;\n",
      // The UI composing a run itself (JSX: the .tsx parse must work).
      'components/start.tsx': "import { compose } from '../src/cli/compose';\nexport const View = () => <box>{compose()}</box>;\n",
      'src/cli/compose.ts': 'export const compose = (): number => 1;\n',
      // The UI reading sessions from disk itself instead of through the core (an attached front end could not).
      'components/history.ts': "import { readRunSessions } from '../src/session/session-files';\nexport const h = readRunSessions;\n",
      'src/session/session-files.ts': 'export const readRunSessions = (): number => 1;\n',
      'components/paths.ts': "import { layoutFor } from '../src/storage/layout';\nexport const p = layoutFor;\n",
      'src/storage/layout.ts': 'export const layoutFor = (): number => 1;\n',
      // Allowed: the UI importing the core interface.
      'components/ok.tsx': "import type { Core } from '../src/runtime/core-api';\nexport const Ok = (p: { core: Core }) => <box>{String(p.core)}</box>;\n",
      'src/runtime/core-api.ts': 'export interface Core { readonly id: string }\n',
    };
    for (const [path, text] of Object.entries(files)) {
      await mkdir(join(dir, dirname(path)), { recursive: true });
      await writeFile(join(dir, path), text);
    }
    const { code, report } = check(dir);
    assert.equal(code, 1);
    const found = report.violations.map((v) => `${v.rule}: ${v.from} → ${v.to}`).sort();
    assert.deepEqual(found, [
      'layer-events: src/events/bus.ts → src/runtime/core.ts',
      'no-cycle: src/runtime/run-state.ts → src/runtime/turn.ts',
      'runtime-file-without-tier: src/runtime/helper.ts → src/runtime/scheduler.ts',
      'runtime-tier-1: src/runtime/delegation.ts → src/runtime/scheduler.ts',
      'ui-not-on-disk: components/history.ts → src/session/session-files.ts',
      'ui-not-on-disk: components/paths.ts → src/storage/layout.ts',
      'ui-through-core-interface: components/start.tsx → src/cli/compose.ts',
    ]);
  });
});
