import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { previewApproval, PREVIEW_MAX_BYTES } from '../../../src/authz/approvals/preview';
import { withTempDir, makeTempDir } from '../../helpers/tmp';

test('file_write on an existing file: a unified diff against the file on disk', async () => {
  await withTempDir(async (root) => {
    await writeFile(join(root, 'a.txt'), 'one\ntwo\nthree\n');
    const p = await previewApproval(root, 'file_write', { path: 'a.txt', content: 'one\nTWO\nthree\nfour\n' });
    assert.equal(p.kind, 'diff');
    const lines = p.text.split('\n');
    assert.equal(lines[0], '--- a/a.txt');
    assert.equal(lines[1], '+++ b/a.txt');
    assert.match(lines[2]!, /^@@ -1,3 \+1,4 @@/);
    assert.deepEqual(lines.slice(3), [' one', '-two', '+TWO', ' three', '+four']);
  });
});

test('file_write of a new file diffs against /dev/null; an unchanged file says so', async () => {
  await withTempDir(async (root) => {
    const p = await previewApproval(root, 'file_write', { path: 'notes/new.md', content: '# Hi\n' });
    assert.equal(p.kind, 'diff');
    assert.match(p.text, /^--- \/dev\/null\n\+\+\+ b\/notes\/new\.md\n@@ -0,0 \+1,1 @@\n\+# Hi$/);
    await writeFile(join(root, 'same.txt'), 'x\n');
    const same = await previewApproval(root, 'file_write', { path: 'same.txt', content: 'x\n' });
    assert.deepEqual(same, { kind: 'diff', text: 'same.txt: no change (the file already has this content)' });
  });
});

test('file_edit: the diff of the unique replacement; replaceAll; failures fall back to JSON with the reason', async () => {
  await withTempDir(async (root) => {
    await writeFile(join(root, 'c.ts'), 'const a = 1;\nconst b = 2;\nconst a2 = 1;\n');
    const p = await previewApproval(root, 'file_edit', { path: 'c.ts', oldString: 'b = 2', newString: 'b = 3' });
    assert.equal(p.kind, 'diff');
    assert.ok(p.text.includes('-const b = 2;\n+const b = 3;'), p.text);

    const ambiguous = await previewApproval(root, 'file_edit', { path: 'c.ts', oldString: '= 1', newString: '= 9' });
    assert.equal(ambiguous.kind, 'json');
    assert.match(ambiguous.text, /^no preview: oldString matches 2 times in c\.ts/);
    assert.ok(ambiguous.text.includes('"oldString": "= 1"'));

    const all = await previewApproval(root, 'file_edit', { path: 'c.ts', oldString: '= 1', newString: '= 9', replaceAll: true });
    assert.equal(all.kind, 'diff');
    assert.ok(all.text.includes('+const a = 9;') && all.text.includes('+const a2 = 9;'), all.text);

    const missing = await previewApproval(root, 'file_edit', { path: 'c.ts', oldString: 'zzz', newString: 'y' });
    assert.match(missing.text, /^no preview: oldString was not found in c\.ts/);
    const noFile = await previewApproval(root, 'file_edit', { path: 'nope.ts', oldString: 'a', newString: 'b' });
    assert.match(noFile.text, /^no preview: nope\.ts does not exist/);
  });
});

test('file_edit matches \\n as \\r\\n in a CRLF file, like the tool', async () => {
  await withTempDir(async (root) => {
    await writeFile(join(root, 'w.txt'), 'a\r\nb\r\nc\r\n');
    const p = await previewApproval(root, 'file_edit', { path: 'w.txt', oldString: 'a\nb', newString: 'a\nB' });
    assert.equal(p.kind, 'diff');
    assert.ok(p.text.includes('-b\r\n+B\r'), JSON.stringify(p.text));
  });
});

test('confined to the workspace: outside paths, .legion and symlinks out are refused, nothing read', async () => {
  const outside = await makeTempDir();
  try {
    await writeFile(join(outside.dir, 'secret.txt'), 'SECRET\n');
    await withTempDir(async (root) => {
      await mkdir(join(root, '.legion'));
      await writeFile(join(root, '.legion', 'x.json'), '{}');
      await symlink(outside.dir, join(root, 'out'));
      for (const path of ['../x.txt', join(outside.dir, 'secret.txt'), '.legion/x.json', 'out/secret.txt']) {
        const p = await previewApproval(root, 'file_write', { path, content: 'y\n' });
        assert.equal(p.kind, 'json', path);
        assert.match(p.text, /^no preview: path .*(outside the workspace|inside \.legion|symlink)/, path);
        assert.ok(!p.text.includes('SECRET'));
      }
    });
  } finally {
    await outside.cleanup();
  }
});

test('shell shows the full command; other tools and bad inputs show JSON', async () => {
  await withTempDir(async (root) => {
    const cmd = 'npm test -- --grep "a b" && rm -rf build; echo done';
    assert.deepEqual(await previewApproval(root, 'shell', { command: cmd }), { kind: 'command', text: `$ ${cmd}` });
    assert.deepEqual(await previewApproval(root, 'shell', { command: 'ls', timeoutMs: 500 }), { kind: 'command', text: '$ ls\n(timeout 500 ms)' });
    assert.deepEqual(await previewApproval(root, 'file_delete', { path: 'a' }), { kind: 'json', text: '{\n  "path": "a"\n}' });
    const bad = await previewApproval(root, 'file_write', { path: 3 });
    assert.equal(bad.kind, 'json');
    assert.match(bad.text, /^no preview: file_write needs path and content/);
  });
});

test('binary and too-large files are not diffed', async () => {
  await withTempDir(async (root) => {
    await writeFile(join(root, 'bin'), Buffer.from([1, 0, 2]));
    assert.match((await previewApproval(root, 'file_write', { path: 'bin', content: 'x' })).text, /^no preview: bin is a binary file/);
    await writeFile(join(root, 'big'), 'x'.repeat(PREVIEW_MAX_BYTES + 1));
    assert.match((await previewApproval(root, 'file_write', { path: 'big', content: 'x' })).text, /^no preview: big is too large to diff/);
  });
});
