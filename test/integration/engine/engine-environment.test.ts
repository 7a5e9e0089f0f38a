import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { restateServerBinary, startLocalEngine } from '../../../src/engine/local-engine';
import { until } from '../../helpers/processes';
import { withTempDir } from '../../helpers/tmp';

const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

/** The environment of a running process, as the kernel holds it. */
function environOf(pid: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')) {
    const eq = entry.indexOf('=');
    if (eq > 0) out[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return out;
}

test('restate-server gets none of Legion\'s secrets, its own settings, and a temporary folder inside its private data folder', { skip, timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const dataDir = join(dir, 'data');
    const sharedTmp = join(dir, 'shared-tmp');
    mkdirSync(sharedTmp);
    // A folder an earlier run left: removed at start when empty, kept when not.
    mkdirSync(join(dataDir, 'tmp', 'invoker-OLD'), { recursive: true });
    mkdirSync(join(dataDir, 'tmp', 'invoker-FULL', 'x'), { recursive: true });
    const env = {
      PATH: process.env.PATH, HOME: dir, TMPDIR: sharedTmp,
      ANTHROPIC_API_KEY: 'sk-ant-secret', OPENAI_API_KEY: 'sk-secret', LEGION_TELEGRAM_TOKEN: '123:secret', GITHUB_TOKEN: 'ghp_secret', AWS_SECRET_ACCESS_KEY: 'aws-secret',
      RESTATE_LOG_FORMAT: 'compact',
    };
    const engine = await startLocalEngine({ dataDir, logFile: join(dir, 'engine.log'), env });
    try {
      const seen = environOf(engine.pid);
      for (const secret of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'LEGION_TELEGRAM_TOKEN', 'GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY']) {
        assert.equal(seen[secret], undefined, `${secret} reached restate-server`);
      }
      assert.equal(seen.RESTATE_LOG_FORMAT, 'compact');
      assert.equal(seen.HOME, dir);
      assert.equal(seen.TMPDIR, join(dataDir, 'tmp'));
      assert.equal(statSync(join(dataDir, 'tmp')).mode & 0o777, 0o700);
      // restate-server makes its invoker folders (as its partitions start) where TMPDIR says: none in the shared one.
      const invokerFolders = (): string[] => readdirSync(join(dataDir, 'tmp')).filter((n) => n.startsWith('invoker-'));
      await until(() => invokerFolders().some((n) => n !== 'invoker-FULL'), 'restate-server making an invoker folder in its tmp', 30_000, 50);
      const made = invokerFolders();
      assert.ok(!made.includes('invoker-OLD'), 'an empty folder of an earlier run is left');
      assert.ok(made.includes('invoker-FULL'), 'a folder with content was removed');
      assert.deepEqual(readdirSync(sharedTmp), []);
    } finally {
      try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
    }
  });
});
