import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { surelyAbsent } from '../../../src/storage/absent';
import { readJsonl } from '../../../src/storage/jsonl';
import { loadPricing } from '../../../src/providers/pricing';

// The optional files a start looks for are checked by a synchronous stat before their promised
// read (src/storage/absent.ts): only a sure "no such file" skips the read; anything else reads
// and reports as before.
test('surelyAbsent: only a missing path (or a link to one) is absent; files, folders and paths that fail otherwise are not', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'file.yaml'), 'x: 1\n');
    await mkdir(join(dir, 'folder'));
    await symlink(join(dir, 'gone.yaml'), join(dir, 'dangling.yaml'));
    await symlink(join(dir, 'file.yaml'), join(dir, 'link.yaml'));
    assert.equal(surelyAbsent(join(dir, 'missing.yaml')), true);
    assert.equal(surelyAbsent(join(dir, 'missing', 'deeper.yaml')), true);
    assert.equal(surelyAbsent(join(dir, 'dangling.yaml')), true, 'a read follows the link and finds nothing, as the stat does');
    assert.equal(surelyAbsent(join(dir, 'file.yaml')), false);
    assert.equal(surelyAbsent(join(dir, 'link.yaml')), false);
    assert.equal(surelyAbsent(join(dir, 'folder')), false);
    assert.equal(surelyAbsent(join(dir, 'file.yaml', 'under-a-file')), false, 'ENOTDIR is not "absent": the read reports it');
    assert.equal(surelyAbsent(`${dir}/nul\0byte`), false, 'a stat that throws is not "absent"');
  });
});

test('loaders behind it: a missing file is nothing, a present one is read, one that cannot be read is still reported', async () => {
  await withTempDir(async (dir) => {
    assert.deepEqual(await readJsonl(join(dir, 'none.jsonl')), { records: [], issues: [] });
    await writeFile(join(dir, 'some.jsonl'), '{"a":1}\n');
    assert.deepEqual((await readJsonl(join(dir, 'some.jsonl'))).records, [{ a: 1 }]);
    await mkdir(join(dir, 'models.yaml'));
    const load = await loadPricing([join(dir, 'absent.yaml'), join(dir, 'models.yaml')]);
    assert.equal(load.ok, false, 'a folder where a file is expected is still an error naming it');
    assert.match(load.ok ? '' : load.error, /models\.yaml: cannot read/);
  });
});
