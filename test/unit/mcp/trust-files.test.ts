import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmod, mkdir, realpath, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { definitionFiles, filesChanged } from '../../../src/mcp/trust-files';
import type { StdioDefinition } from '../../../src/mcp/servers';

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');
const stdio = (command: string, args: string[], cwd: string, env: Record<string, string> = {}): StdioDefinition =>
  ({ kind: 'stdio', command, args, env, cwd });

test('definitionFiles: the workspace files a definition runs, by content; nothing outside, no directories', async () => {
  await withTempDir(async (raw) => {
    const dir = await realpath(raw);
    const ws = join(dir, 'ws');
    await mkdir(join(ws, 'tools', 'bin'), { recursive: true });
    await mkdir(join(dir, 'outside'), { recursive: true });
    await writeFile(join(ws, 'tools', 'mcp.js'), 'one');
    await writeFile(join(ws, 'tools', 'conf.json'), '{}');
    await writeFile(join(ws, 'tools', 'bin', 'server'), '#!/bin/sh\n');
    await chmod(join(ws, 'tools', 'bin', 'server'), 0o755);
    await writeFile(join(dir, 'outside', 'x.js'), 'x');
    await symlink(join(dir, 'outside', 'x.js'), join(ws, 'tools', 'link.js'));
    await symlink(join(ws, 'tools', 'mcp.js'), join(dir, 'outside', 'into.js'));

    // node tools/mcp.js: the script argument, not node (outside the workspace)
    assert.deepEqual(await definitionFiles(stdio(process.execPath, ['tools/mcp.js', 'stdio', '-y'], ws), ws, {}), { 'tools/mcp.js': sha('one') });
    // relative to cwd; --flag=value; words of an argument with spaces; a directory is not a file
    assert.deepEqual(
      await definitionFiles(stdio('/bin/sh', ['-c', 'exec node "mcp.js" --config=conf.json', 'bin'], join(ws, 'tools')), ws, {}),
      { 'tools/mcp.js': sha('one'), 'tools/conf.json': sha('{}') },
    );
    assert.deepEqual(await definitionFiles(stdio('node', ['--config=tools/conf.json'], ws), ws, { PATH: '/usr/bin' }), { 'tools/conf.json': sha('{}') });
    // the command as a path, and a bare command found on a PATH directory inside the workspace
    assert.deepEqual(await definitionFiles(stdio('./tools/bin/server', [], ws), ws, {}), { 'tools/bin/server': sha('#!/bin/sh\n') });
    assert.deepEqual(await definitionFiles(stdio('server', [], ws), ws, { PATH: `/usr/bin:${join(ws, 'tools', 'bin')}` }), { 'tools/bin/server': sha('#!/bin/sh\n') });
    assert.deepEqual(await definitionFiles(stdio('server', [], ws, { PATH: 'tools/bin' }), ws, { PATH: '/usr/bin' }), { 'tools/bin/server': sha('#!/bin/sh\n') }, "the entry's own PATH wins");
    // a link in the workspace (pointing out) and a link outside (pointing in) both count
    assert.deepEqual(await definitionFiles(stdio('node', ['tools/link.js'], ws), ws, {}), { 'tools/link.js': sha('x') });
    assert.deepEqual(await definitionFiles(stdio('node', [join(dir, 'outside', 'into.js')], ws), ws, {}), { 'tools/mcp.js': sha('one') });
    // outside the workspace, missing files, http: nothing
    assert.deepEqual(await definitionFiles(stdio('node', [join(dir, 'outside', 'x.js'), 'nope.js'], ws), ws, {}), {});
    assert.deepEqual(await definitionFiles({ kind: 'http', url: 'http://x/mcp', headers: {} }, ws, {}), {});
  });
});

test('filesChanged names each file that changed, appeared or went away', () => {
  assert.equal(filesChanged({ a: '1' }, { a: '1' }), null);
  assert.equal(filesChanged({ a: '1', b: '2' }, { a: '9', c: '3' }), 'a changed since you trusted it; c is new since you trusted it; b is gone since you trusted it');
});
