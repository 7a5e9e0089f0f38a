import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT, bundlePath, cleanAppEnv, ensureBundle } from '../helpers/bundle';
import { makeTempDir } from '../helpers/tmp';
import { hasTmux, shellCommand, startTmux } from '../helpers/tmux';
// @ts-expect-error: a build script (plain JS, no types)
import { SNAPSHOT_V8_FLAGS } from '../../scripts/snapshot.mjs';

/**
 * The optional files and folders a start looks for synchronously and mostly does not find (skills
 * folders, AGENTS.md and its kin, the sandbox's call records, a server's lock, a new run's
 * ledger) are asked about without an error thrown when missing (`throwIfNoEntry: false`, or
 * `surelyAbsent` of src/storage/absent.ts): each thrown error is built with its stack
 * (docs/performance.md#start-up). The built CLI, from its snapshot, in a `legion init`
 * workspace: its first start (a new run) and the next (the run resumed) throw none before the
 * first frame.
 */
const PRELOAD = join(REPO_ROOT, 'test', 'helpers', 'missing-throws.cjs');

test('a start of a legion init workspace throws no error for a missing file before its first frame', { skip: !hasTmux() && 'tmux is not installed', timeout: 120_000 }, async () => {
  ensureBundle({ e2e: true });
  // The blob the launcher starts (the build's; dist/ may hold an older one).
  const blob = /--snapshot-blob '([^']+)'/.exec(readFileSync(join(REPO_ROOT, 'dist', 'legion'), 'utf8'))?.[1];
  const ws = await makeTempDir('legion-missing-throws-');
  // PATH as `npm test` gives it: `node_modules/.bin` of every ancestor folder, most of them missing.
  const env = { ...cleanAppEnv(), PATH: `/nonexistent-legion-test/node_modules/.bin:/nonexistent-legion-test/.bin:${process.env.PATH ?? ''}` };
  const out = join(ws.dir, 'throws.txt');
  const init = spawnSync(process.execPath, [bundlePath, 'init'], { cwd: ws.dir, env, encoding: 'utf8' });
  assert.equal(init.status, 0, init.stderr);
  // From the snapshot when the build made one (the launcher's start), else the plain bundle.
  const node = blob
    ? [process.execPath, ...SNAPSHOT_V8_FLAGS, '--require', PRELOAD, '--snapshot-blob', blob, '--']
    : [process.execPath, '--require', PRELOAD, bundlePath];
  const tmux = startTmux({ command: 'sleep 60', cwd: ws.dir, env: { ...env, LEGION_MISSING_THROWS_OUT: out }, width: 120, height: 40 });
  try {
    for (const start of ['new run', 'resumed run']) {
      rmSync(out, { force: true });
      tmux.respawn(shellCommand(node));
      await tmux.waitFor(() => existsSync(out), 30_000, `the first frame (${start})`);
      await tmux.waitFor(/message ur-agent/, 30_000, `the first frame drawn (${start})`);
      assert.deepEqual(readFileSync(out, 'utf8').split('\n').filter(Boolean), [], `${start}: synchronous calls that threw for a missing path`);
      tmux.keys('C-c', 'C-c');
      await tmux.waitFor(() => tmux.dead(), 15_000, `the app to exit (${start})`);
    }
  } finally {
    tmux.kill();
    await ws.cleanup();
  }
});
