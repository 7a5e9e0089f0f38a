import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { access, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeSandbox, makeToolContext, SENTINEL_CONTENT, type Sandbox } from '../../helpers/tool-context';
import { fileListTool, FILE_LIST_MAX_ENTRIES } from '../../../src/tools/builtin/file-list';
import { fileDeleteTool } from '../../../src/tools/builtin/file-delete';
import { executeTool } from '../../../src/tools/execute-tool';
import type { Tool, ToolResult } from '../../../src/tools/types';

async function withSandbox(fn: (sb: Sandbox, run: (tool: Tool, input: unknown) => Promise<ToolResult>) => Promise<void>): Promise<void> {
  const sb = await makeSandbox();
  try {
    await fn(sb, (tool, input) => executeTool(tool, input, makeToolContext(sb.root)));
  } finally {
    await sb.cleanup();
  }
}

const exists = (p: string) => access(p).then(() => true, () => false);

test('file_list: dirs first with /, sorted, symlinks shown, .legion hidden in every spelling', () =>
  withSandbox(async (sb, run) => {
    await mkdir(join(sb.root, 'src'));
    await mkdir(join(sb.root, 'Docs'));
    await mkdir(join(sb.root, '.LEGION'));
    await writeFile(join(sb.root, 'b.txt'), '');
    await writeFile(join(sb.root, 'a.txt'), '');
    await writeFile(join(sb.root, '.env'), '');
    await symlink('src', join(sb.root, 'link-dir'));
    await symlink('a.txt', join(sb.root, 'link-file'));
    const r = await run(fileListTool, {});
    assert.equal(r.isError, undefined, r.content);
    assert.equal(r.content, ['Docs/', 'src/', '.env', 'a.txt', 'b.txt', 'link-dir/ -> src', 'link-file -> a.txt'].join('\n'));
    assert.equal(r.summary, 'workspace root: 7 entries');

    await writeFile(join(sb.root, 'src', 'x.ts'), '');
    assert.equal((await run(fileListTool, { path: 'src' })).content, 'x.ts');
    assert.match((await run(fileListTool, { path: 'Docs' })).content, /Docs is empty/);
    assert.match((await run(fileListTool, { path: 'a.txt' })).content, /is a file, not a directory/);
    assert.match((await run(fileListTool, { path: 'nope' })).content, /no such directory/);
    assert.match((await run(fileListTool, { path: '.legion' })).content, /inside \.legion/);
    assert.match((await run(fileListTool, { path: 7 })).content, /invalid input for file_list: path/);
  }));

test('file_list caps the number of entries with a note', () =>
  withSandbox(async (sb, run) => {
    await mkdir(join(sb.root, 'many'));
    for (let i = 0; i < FILE_LIST_MAX_ENTRIES + 25; i += 1) await writeFile(join(sb.root, 'many', `f${String(i).padStart(5, '0')}`), '');
    const r = await run(fileListTool, { path: 'many' });
    const lines = r.content.split('\n');
    assert.equal(lines.length, FILE_LIST_MAX_ENTRIES + 1);
    assert.equal(lines.at(-1), '[… 25 more entries not shown]');
  }));

test('file_delete removes files, symlinks (not their targets; outward links refused) and empty directories', () =>
  withSandbox(async (sb, run) => {
    await writeFile(join(sb.root, 'a.txt'), 'x');
    assert.equal((await run(fileDeleteTool, { path: 'a.txt' })).content, 'Deleted file a.txt');
    assert.equal(await exists(join(sb.root, 'a.txt')), false);

    await writeFile(join(sb.root, 'target.txt'), 'kept');
    await symlink('target.txt', join(sb.root, 'in-link'));
    assert.equal((await run(fileDeleteTool, { path: 'in-link' })).content, 'Deleted symlink in-link');
    assert.equal(await exists(join(sb.root, 'in-link')), false);
    assert.equal(await readFile(join(sb.root, 'target.txt'), 'utf8'), 'kept');

    await symlink(join(sb.outside, 'sentinel.txt'), join(sb.root, 'out-link'));
    assert.match((await run(fileDeleteTool, { path: 'out-link' })).content, /leads outside the workspace through a symlink/);
    assert.equal(await readFile(join(sb.outside, 'sentinel.txt'), 'utf8'), SENTINEL_CONTENT);

    await mkdir(join(sb.root, 'd', 'e'), { recursive: true });
    const full = await run(fileDeleteTool, { path: 'd' });
    assert.equal(full.isError, true);
    assert.match(full.content, /not empty; delete its files first/);
    assert.equal((await run(fileDeleteTool, { path: 'd/e/' })).content, 'Deleted empty directory d/e/');
    assert.equal(await exists(join(sb.root, 'd', 'e')), false);
  }));

test('file_delete refuses the root, missing files, escapes and .legion', () =>
  withSandbox(async (sb, run) => {
    for (const p of ['.', '', './', 'x/..', sb.root, `${sb.root}/`]) {
      const r = await run(fileDeleteTool, { path: p });
      assert.equal(r.isError, true, p);
      assert.match(r.content, /workspace root/, p);
    }
    assert.match((await run(fileDeleteTool, { path: 'ghost.txt' })).content, /no such file/);
    for (const p of ['../outside/sentinel.txt', join(sb.outside, 'sentinel.txt'), '..', '~/x', '.legion/secret.json', '.Legion', '.legion']) {
      const r = await run(fileDeleteTool, { path: p });
      assert.equal(r.isError, true, p);
      assert.match(r.content, /outside|\.legion|~/, p);
    }
    await symlink(sb.outside, join(sb.root, 'out-dir'));
    assert.match((await run(fileDeleteTool, { path: 'out-dir/sentinel.txt' })).content, /symlink/);
    assert.equal(await readFile(join(sb.outside, 'sentinel.txt'), 'utf8'), SENTINEL_CONTENT);
    assert.equal(await exists(join(sb.root, '.legion', 'secret.json')), true);
  }));
