import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { startAppHarness } from '../../helpers/app-harness';
import { withTempDir } from '../../helpers/tmp';
import { trustKeyFile } from '../../../src/storage/workspace-trust';

/**
 * A trust key others could read may have been copied, and every marker it signs forged
 * (docs/workspace-trust.md: checked, never repaired). The start that finds it is untrusted; the
 * start-up tightening of the config folder must not make it private, or the next start would
 * trust the workspace again (and any forged marker) with no word to the user.
 */
const AGENTS = [{ id: 'lead', tools: ['communicator', 'resolve_approval'], approvalAuthority: '*' as const }];

test('an exposed trust key is not silently repaired by the start-up tightening: the next start is still untrusted', async () => {
  await withTempDir(async (dir) => {
    const first = await startAppHarness({ dir, agents: AGENTS });
    await first.close();
    const key = trustKeyFile(join(dir, '.legion', 'test-home', '.config', 'legion'));
    await chmod(key, 0o644);
    for (let start = 1; start <= 2; start++) {
      const app = await startAppHarness({ dir, untrusted: true, agents: AGENTS });
      try {
        const notices = app.events.filter((e) => e.type === 'notice' && /untrusted workspace/.test(e.message));
        assert.equal(notices.length, 1, `start ${start}: the workspace is untrusted`);
        assert.match((notices[0] as { message: string }).message, /workspace-trust\.key is readable or writable by others/);
        const lead = app.registry.get('lead');
        assert.ok(lead?.kind === 'agent');
        assert.deepEqual(lead.approvalAuthority, [], `start ${start}: no authority from the workspace`);
      } finally {
        await app.close();
      }
      assert.equal((await lstat(key)).mode & 0o777, 0o644, `start ${start}: the key is left for the user to remove`);
    }
  });
});
