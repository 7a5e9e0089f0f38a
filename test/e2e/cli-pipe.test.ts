import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { bundlePath, ensureBundle } from '../helpers/bundle';
import { makeTempDir } from '../helpers/tmp';

// `legion rules list | head -1`: the reader closes the pipe early. That is not an error: no
// stack trace, exit 0 (EPIPE used to surface as an unhandled 'error' event).
test('a closed output pipe ends the command quietly', async () => {
  ensureBundle({ e2e: true });
  const ws = await makeTempDir('legion-pipe-');
  try {
    const r = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${bundlePath}" --cwd "${ws.dir}" rules list | head -c 1 >/dev/null`], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /EPIPE|at /);
  } finally {
    await ws.cleanup();
  }
});
