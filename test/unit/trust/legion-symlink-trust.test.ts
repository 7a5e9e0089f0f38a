import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, rename, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { resolveWorkspacePath } from '../../../src/tools/path-safety';
import { checkWorkspaceTrust, writeWorkspaceTrust } from '../../../src/storage/workspace-trust';

/**
 * A `.legion` that is a symbolic link (a repository can commit one: `.legion -> cfg`) puts Legion's
 * rules and config in a folder the file tools do not protect: they refuse `.legion/rules.yaml` but
 * write `cfg/rules.yaml` (its real path names no `.legion`). Trusted, an agent could loosen its own
 * rules through the link's target; so only a real `.legion` folder is trusted (docs/workspace-trust.md).
 */
test('a .legion that is a symbolic link is neither trusted nor marked, even with a valid marker behind it', async () => {
  await withTempDir(async (dir) => {
    const root = join(dir, 'repo');
    const place = { workspaceRoot: root, userDir: join(dir, 'user') };
    await mkdir(join(root, '.legion'), { recursive: true });
    assert.equal((await writeWorkspaceTrust(place)).ok, true);
    assert.equal((await checkWorkspaceTrust(place)).trusted, true);
    // The same files, now behind a link: the marker (for this workspace, by this user) is still there.
    await rename(join(root, '.legion'), join(root, 'cfg'));
    await symlink('cfg', join(root, '.legion'));
    const fileTool = await resolveWorkspacePath(root, 'cfg/rules.yaml');
    assert.equal(fileTool.ok, true, 'the file tools write the link target (what makes the link unsafe)');
    const trust = await checkWorkspaceTrust(place);
    assert.equal(trust.trusted, false);
    assert.match(trust.trusted ? '' : trust.detail, /symbolic link/);
    const written = await writeWorkspaceTrust(place);
    assert.equal(written.ok, false);
  });
});
