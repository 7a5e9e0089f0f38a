import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTempDir } from '../helpers/tmp';
import { cleanAppEnv, ensureBundle, bundlePath } from '../helpers/bundle';
import { hasTmux, shellCommand, startTmux } from '../helpers/tmux';

const realGit = spawnSync('sh', ['-c', 'command -v git']).stdout?.toString().trim();

/** Every run's event ledger of the workspace, as one text. */
function ledgers(workspace: string): string {
  const runs = join(workspace, '.legion', 'runs');
  if (!existsSync(runs)) return '';
  return readdirSync(runs).map((id) => join(runs, id, 'events.jsonl')).filter((f) => existsSync(f)).map((f) => readFileSync(f, 'utf8')).join('');
}

/**
 * A program on PATH that notes its start in `started`, then waits until the file `release`
 * exists before doing its job: a bubblewrap that is slow to answer and fails, a git that is
 * slow to start then runs the real one.
 */
function blockingProgram(dir: string, name: string, then: string): void {
  writeFileSync(join(dir, 'bin', name), [
    '#!/bin/sh',
    `echo "${name} $*" >> '${join(dir, 'started')}'`,
    `while [ ! -e '${join(dir, 'release')}' ]; do sleep 0.02; done`,
    then,
    '',
  ].join('\n'));
  chmodSync(join(dir, 'bin', name), 0o755);
}

/**
 * docs/performance.md (start-up): the first frame waits neither for the bubblewrap probe nor for
 * the checkpoint repository's git. Both programs block until the test releases them, which it
 * does only once the frame is on screen: a start that waited for either would never draw it.
 * Then both run in the background, and the probe's outcome still reaches the status line.
 */
test('tmux: the first frame is drawn before the sandbox probe and the checkpoint git answer; both run after it', { skip: (!hasTmux() && 'tmux is not installed') || (!realGit && 'git is not installed'), timeout: 90_000 }, async () => {
  ensureBundle({ e2e: true });
  const scratch = await makeTempDir('legion-first-frame-');
  const dir = scratch.dir;
  const workspace = join(dir, 'ws');
  mkdirSync(join(dir, 'bin'));
  mkdirSync(workspace);
  blockingProgram(dir, 'bwrap', "echo 'bwrap: fake bubblewrap refuses' >&2; exit 1");
  blockingProgram(dir, 'git', `exec '${realGit}' "$@"`);
  const env = cleanAppEnv({ HOME: dir, PATH: `${join(dir, 'bin')}:${process.env.PATH ?? ''}` });
  const init = spawnSync(process.execPath, [bundlePath, 'init'], { cwd: workspace, env, encoding: 'utf8', timeout: 30_000 });
  assert.equal(init.status, 0, init.stderr);
  const started = (): string => (existsSync(join(dir, 'started')) ? readFileSync(join(dir, 'started'), 'utf8') : '');
  const tmux = startTmux({ command: shellCommand([process.execPath, bundlePath]), cwd: workspace, env, width: 120, height: 40 });
  try {
    await tmux.waitFor((s) => /legion/i.test(s) && /demo/i.test(s), 30_000, 'the first frame while bwrap and git are held');
    assert.equal(existsSync(join(dir, 'release')), false);
    // After the frame, the background set-up starts: the probe first.
    await tmux.waitFor(() => /^bwrap /m.test(started()), 30_000, 'the sandbox probe to start after the first frame');
    writeFileSync(join(dir, 'release'), '');
    // The status line joins it after the demo notice (cut to the terminal's width): the run's ledger has it whole.
    await tmux.waitFor(() => /shell commands run WITHOUT a sandbox: bubblewrap does not run here \(bwrap: fake bubblewrap refuses\)/.test(ledgers(workspace)), 30_000, 'the probe\'s notice');
    await tmux.waitFor(() => existsSync(join(workspace, '.legion', 'checkpoints', 'git', 'HEAD')), 30_000, 'the checkpoint repository, made in the background');
    assert.match(started(), /^git /m, 'checkpoints set up through git after the frame');
    tmux.keys('C-c', 'C-c');
    await tmux.waitFor(() => tmux.dead(), 15_000, 'the app to exit');
  } finally {
    tmux.kill();
    await scratch.cleanup();
  }
});
