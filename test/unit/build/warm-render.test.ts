import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { warmFirstRender } from '../../../components/warm-render';
import { forgetOutputCaches, rowsBuiltSoFar } from '../../../components/text/ink-output';
import { shippedConfig } from '../../../src/cli/snapshot-warm';
import { renderApp, stripAnsi } from '../../helpers/tui-app';

// The snapshot build's render of the first screen (components/warm-render.tsx): it must draw
// that screen and leave nothing of it in the process it runs in, which becomes the snapshot.

const config = shippedConfig((name) => readFileSync(join(resolve('config'), name), 'utf8'));

/** What a process holds that a render could leave behind: pending work, the process's listeners, its emit. */
const processState = () => ({
  resources: process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').sort(),
  listeners: Object.fromEntries(['exit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'beforeExit', 'uncaughtException', 'unhandledRejection'].map((e) => [e, process.listenerCount(e)])),
  emit: process.emit,
  reallyExit: (process as unknown as { reallyExit: unknown }).reallyExit,
  dateNow: Date.now,
  performanceNow: performance.now,
});

/** Rows the output cache built for the first frame of a fresh harness, and that frame. */
async function harnessFrame(): Promise<{ frame: string; rows: number }> {
  const before = rowsBuiltSoFar();
  const app = await renderApp({ demo: true, providerLabel: 'demo', workspaceRoot: '/' });
  try {
    return { frame: app.rawFrame(), rows: rowsBuiltSoFar() - before };
  } finally {
    app.unmount();
  }
}

// First in this file: the process has not run Ink yet (signal-exit, which Ink's instances hook the
// exit through, patches the process while any is mounted and unpatches it after the last).
test('warm render: once it resolves, no timer, immediate, handle or process listener of it is left, the process is not patched, and the clock is the real one again', async () => {
  const before = processState();
  const started = Date.now();
  await warmFirstRender(config);
  assert.deepEqual(processState(), before);
  assert.ok(Date.now() >= started && performance.now() > 0, 'the clock runs again');
});

test('warm render: draws the first screen (the home lane, the welcome, the demo notice, the composer, the status bar)', async () => {
  const drawn = stripAnsi(await warmFirstRender(config));
  for (const part of ['user → ur-agent · default', 'Welcome to Legion.', 'DEMO', 'message ur-agent', 'legion · run ']) {
    assert.ok(drawn.includes(part), `${part} is drawn:\n${drawn}`);
  }
});

test('warm render: no row, width or block of its screen stays cached for the screen a start draws next', async () => {
  await warmFirstRender(config);
  const afterWarm = await harnessFrame();
  forgetOutputCaches();
  const fresh = await harnessFrame();
  assert.equal(afterWarm.frame, fresh.frame, 'the same first frame');
  assert.ok(fresh.rows > 0);
  assert.equal(afterWarm.rows, fresh.rows, 'the rows the warm-up drew (rule, welcome, blank rows) are built again, not found in a cache it filled');
});
