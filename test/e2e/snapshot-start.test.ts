import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, bundlePath, cleanAppEnv, ensureBundle } from '../helpers/bundle';
import { makeTempDir } from '../helpers/tmp';
import { hasTmux, shellCommand, startTmux, type TmuxSession } from '../helpers/tmux';
// @ts-expect-error: a build script (plain JS, no types)
import { SNAPSHOT_V8_FLAGS } from '../../scripts/snapshot.mjs';

/**
 * The `legion` command of the build (dist/legion, scripts/snapshot.mjs) starts Node from the
 * build's V8 start-up snapshot, and what the UI's modules computed from the terminal at load
 * (chalk's colours, Ink's CI check) is the terminal's at the start, not the build's: the first
 * screen is the plain bundle's, colours included, even with CI=true inherited (Ink draws nothing
 * until exit in CI mode), and the keyboard works.
 */
const LAUNCHER = join(REPO_ROOT, 'dist', 'legion');

/** The SGR sequences (colours, bold, dim…) on a screen captured with `-e`. */
const styles = (screen: string): string[] => [...new Set(screen.match(/\x1b\[[0-9;:]*m/g) ?? [])].sort();

async function firstScreen(tmux: TmuxSession): Promise<string> {
  await tmux.waitFor(/message ur-agent/, 30_000, 'the first frame');
  return tmux.captureStyled();
}

test('legion (the launcher) starts from the snapshot: same first screen and colours as the plain bundle, CI=true inherited, keys typed', { skip: (!hasTmux() && 'tmux is not installed') || (!existsSync('/proc/self/cmdline') && 'needs /proc'), timeout: 120_000 }, async () => {
  ensureBundle({ e2e: true });
  const blob = /--snapshot-blob '([^']+)'/.exec(readFileSync(LAUNCHER, 'utf8'))?.[1];
  assert.ok(blob && existsSync(blob), 'the build made a snapshot and the launcher names it');
  const fromSnapshot = await makeTempDir('legion-snapshot-e2e-');
  const plain = await makeTempDir('legion-snapshot-e2e-plain-');
  const env = { ...cleanAppEnv(), COLORTERM: 'truecolor', CI: 'true', CONTINUOUS_INTEGRATION: 'true' };
  const tmux = startTmux({ command: shellCommand([LAUNCHER, '--cwd', fromSnapshot.dir]), cwd: fromSnapshot.dir, env, width: 100, height: 30 });
  try {
    const snapshotScreen = await firstScreen(tmux);
    const args = readFileSync(`/proc/${tmux.pid()}/cmdline`, 'utf8').split('\0');
    const at = args.indexOf('--snapshot-blob');
    assert.ok(at > 0 && args[at + 1] === blob, 'the pane\'s node started from the snapshot');
    tmux.type('hello');
    await tmux.waitFor(/› hello/, 15_000, 'the typed text drawn live');
    tmux.keys('C-c', 'C-c');
    await tmux.waitFor(() => tmux.dead(), 15_000, 'the app to exit');

    tmux.respawn(shellCommand([process.execPath, bundlePath, '--cwd', plain.dir]));
    const plainScreen = await firstScreen(tmux);
    assert.ok(styles(plainScreen).some((s) => /\x1b\[(3|9|38)/.test(s)), 'the plain start draws in colour');
    assert.deepEqual(styles(snapshotScreen), styles(plainScreen), 'the same colours and attributes');
    const text = (s: string) => s.replace(/\x1b\[[0-9;:]*m/g, '').replace(/\s+$/gm, '');
    assert.equal(text(snapshotScreen).split('\n').length, text(plainScreen).split('\n').length);
  } finally {
    tmux.kill();
    await fromSnapshot.cleanup();
    await plain.cleanup();
  }
});

// Node's embedded code cache of its built-in modules is refused to a process with the snapshot's
// V8 flags (scripts/snapshot.mjs): a built-in first loaded after the start would be compiled
// from source. The build loads those the first frame needs (scripts/snapshot-entry.cjs).
test('a start from the snapshot loads no Node built-in module before its first frame', { skip: (!hasTmux() && 'tmux is not installed'), timeout: 120_000 }, async () => {
  ensureBundle({ e2e: true });
  const launcher = readFileSync(LAUNCHER, 'utf8');
  const blob = /--snapshot-blob '([^']+)'/.exec(launcher)?.[1];
  assert.ok(blob && existsSync(blob), 'the build made a snapshot and the launcher names it');
  const ws = await makeTempDir('legion-snapshot-builtins-');
  const out = join(ws.dir, 'builtins.json');
  const preload = join(REPO_ROOT, 'test', 'fixtures', 'snapshot', 'builtins-at-frame.cjs');
  // The launcher's own command line, with the preload (NODE_OPTIONS would turn the snapshot off).
  const command = shellCommand([process.execPath, ...(SNAPSHOT_V8_FLAGS as string[]), '--require', preload, '--snapshot-blob', blob, '--', '--cwd', ws.dir]);
  const tmux = startTmux({ command, cwd: ws.dir, env: { ...cleanAppEnv(), LEGION_BUILTINS_OUT: out }, width: 100, height: 30 });
  try {
    await firstScreen(tmux);
    await tmux.waitFor(() => existsSync(out), 15_000, 'the preload to record the first frame');
    assert.deepEqual(JSON.parse(readFileSync(out, 'utf8')), [], 'built-ins loaded between the deserialization and the first frame');
    // Quit and wait for the exit before removing the folder: what starts after the first frame
    // (the checkpoint store) writes under .legion/ meanwhile (a removal racing it: ENOTEMPTY).
    tmux.keys('C-c', 'C-c');
    await tmux.waitFor(() => tmux.dead(), 15_000, 'the app to exit');
  } finally {
    tmux.kill();
    await ws.cleanup();
  }
});
