import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, realpath, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { realWorkspaceRoot } from '../../../src/cli/workspace-root';
import { LegionError } from '../../../src/errors';

// Every start resolves its workspace before its first frame: synchronously (a promised call is a
// round trip through libuv's thread pool; docs/performance.md#start-up).
test('realWorkspaceRoot: the real path, a missing folder a LegionError naming it, and no promised file call', async () => {
  await withTempDir(async (dir) => {
    await mkdir(join(dir, 'ws'));
    await symlink(join(dir, 'ws'), join(dir, 'link'));
    const inPool = (): number => process.getActiveResourcesInfo().filter((r) => r.startsWith('FSReq')).length;
    const before = inPool();
    const pending = realWorkspaceRoot(join(dir, 'link'));
    assert.equal(inPool() - before, 0, 'a promised file call pending once it began');
    assert.equal(await pending, await realpath(join(dir, 'ws')));
    await assert.rejects(realWorkspaceRoot(join(dir, 'missing')), (error: unknown) => error instanceof LegionError && error.message.includes(join(dir, 'missing')) && /ENOENT/.test(error.message));
  });
});
