import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { link, mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { linkedGrantingFiles } from '../../../src/storage/trust-links';

/**
 * What `legion trust` trusts must be what it listed (docs/workspace-trust.md#how-trust-is-recorded):
 * a granting file of `.legion/` that is a symbolic link, lies under a linked folder, or has a second
 * hard link elsewhere could be rewritten after the trust, where the sandbox does not hide it.
 */
test('linkedGrantingFiles: symbolic links, linked folders and second hard links of granting files; nothing else', async () => {
  await withTempDir(async (dir) => {
    const legion = join(dir, '.legion');
    await mkdir(join(legion, 'collective', 'participants'), { recursive: true });
    await mkdir(join(legion, 'runs', 'r1'), { recursive: true });
    await mkdir(join(dir, 'elsewhere'), { recursive: true });
    await writeFile(join(legion, 'config.yaml'), '');
    await writeFile(join(legion, 'audit.jsonl'), '');
    await writeFile(join(legion, 'collective', 'participants', 'plain.json'), '{}');
    assert.deepEqual(linkedGrantingFiles(legion), [], 'plain files and non-granting ones: nothing');
    await writeFile(join(dir, 'rules.yaml'), '');
    await symlink(join(dir, 'rules.yaml'), join(legion, 'rules.yaml'));
    await writeFile(join(legion, 'runs', 'r1', 'allowances.jsonl'), '');
    await link(join(legion, 'runs', 'r1', 'allowances.jsonl'), join(dir, 'hard'));
    await symlink(join(dir, 'elsewhere'), join(legion, 'engine'));
    await writeFile(join(legion, 'collective', 'participants', 'x.json.bak'), '');
    await link(join(legion, 'collective', 'participants', 'x.json.bak'), join(dir, 'hard2'));
    assert.deepEqual(linkedGrantingFiles(legion), ['engine', 'rules.yaml', 'runs/r1/allowances.jsonl']);
  });
});
