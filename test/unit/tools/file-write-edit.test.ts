import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeSandbox, makeToolContext, type Sandbox } from '../../helpers/tool-context';
import { fileWriteTool, lineCount } from '../../../src/tools/builtin/file-write';
import { fileEditTool, occurrences } from '../../../src/tools/builtin/file-edit';
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

test('lineCount and occurrences', () => {
  assert.equal(lineCount(''), 0);
  assert.equal(lineCount('a'), 1);
  assert.equal(lineCount('a\n'), 1);
  assert.equal(lineCount('a\nb'), 2);
  assert.deepEqual(occurrences('aaaa', 'aa'), [0, 2]);
  assert.deepEqual(occurrences('abc', 'x'), []);
});

test('file_write creates parents, reports bytes and lines, overwrites atomically keeping the mode', () =>
  withSandbox(async (sb, run) => {
    const created = await run(fileWriteTool, { path: 'deep/er/new.txt', content: 'héllo\nworld\n' });
    assert.equal(created.isError, undefined, created.content);
    assert.equal(created.content, 'Created deep/er/new.txt (13 bytes, 2 lines)');
    assert.equal(await readFile(join(sb.root, 'deep/er/new.txt'), 'utf8'), 'héllo\nworld\n');

    await writeFile(join(sb.root, 'script.sh'), 'old');
    await chmod(join(sb.root, 'script.sh'), 0o750);
    const over = await run(fileWriteTool, { path: './script.sh', content: '#!/bin/sh\n' });
    assert.equal(over.content, 'Overwrote script.sh (10 bytes, 1 line)');
    assert.equal((await stat(join(sb.root, 'script.sh'))).mode & 0o777, 0o750);
    assert.deepEqual((await readdir(sb.root)).filter((n) => n.endsWith('.legion-tmp')), []);

    const empty = await run(fileWriteTool, { path: 'empty.txt', content: '' });
    assert.equal(empty.content, 'Created empty.txt (0 bytes, 0 lines)');
  }));

test('file_write refuses directories, the root, a file in the way, and writes through an inside symlink', () =>
  withSandbox(async (sb, run) => {
    await mkdir(join(sb.root, 'dir'));
    const dir = await run(fileWriteTool, { path: 'dir', content: 'x' });
    assert.equal(dir.isError, true);
    assert.match(dir.content, /dir is a directory/);
    const root = await run(fileWriteTool, { path: '.', content: 'x' });
    assert.match(root.content, /workspace root/);
    await writeFile(join(sb.root, 'file'), 'x');
    const blocked = await run(fileWriteTool, { path: 'file/child.txt', content: 'x' });
    assert.equal(blocked.isError, true);
    assert.match(blocked.content, /a file is in the way|ENOTDIR|EEXIST/);

    await writeFile(join(sb.root, 'target.txt'), 'old');
    await symlink('target.txt', join(sb.root, 'alias.txt'));
    const via = await run(fileWriteTool, { path: 'alias.txt', content: 'new' });
    assert.equal(via.content, 'Overwrote target.txt (3 bytes, 1 line)');
    assert.equal(await readFile(join(sb.root, 'target.txt'), 'utf8'), 'new');
  }));

test('file_edit replaces a unique match and reports the line', () =>
  withSandbox(async (sb, run) => {
    await writeFile(join(sb.root, 'a.ts'), 'const a = 1;\nconst b = 2;\nconst c = "$&";\n');
    const r = await run(fileEditTool, { path: 'a.ts', oldString: 'const b = 2;', newString: 'const b = "$1 $& $$";' });
    assert.equal(r.isError, undefined, r.content);
    assert.equal(r.content, 'Replaced 1 occurrence in a.ts (line 2)');
    assert.equal(await readFile(join(sb.root, 'a.ts'), 'utf8'), 'const a = 1;\nconst b = "$1 $& $$";\nconst c = "$&";\n');
  }));

test('file_edit refuses an ambiguous match, naming the count and lines; replaceAll replaces all', () =>
  withSandbox(async (sb, run) => {
    await writeFile(join(sb.root, 'a.txt'), 'x = 1\ny = 2\nx = 1\nx = 1\n');
    const ambiguous = await run(fileEditTool, { path: 'a.txt', oldString: 'x = 1', newString: 'x = 9' });
    assert.equal(ambiguous.isError, true);
    assert.match(ambiguous.content, /matches 3 times in a\.txt \(lines 1, 3, 4\)/);
    assert.match(ambiguous.content, /replaceAll: true/);
    assert.equal(await readFile(join(sb.root, 'a.txt'), 'utf8'), 'x = 1\ny = 2\nx = 1\nx = 1\n');

    const all = await run(fileEditTool, { path: 'a.txt', oldString: 'x = 1', newString: 'x = 9', replaceAll: true });
    assert.equal(all.content, 'Replaced 3 occurrences in a.txt (first at line 1)');
    assert.equal(await readFile(join(sb.root, 'a.txt'), 'utf8'), 'x = 9\ny = 2\nx = 9\nx = 9\n');
  }));

test('file_edit: not found (with hints), empty and identical strings, missing file, binary, CRLF', () =>
  withSandbox(async (sb, run) => {
    await writeFile(join(sb.root, 'a.py'), 'def f():\n    return 1\n');
    const ws = await run(fileEditTool, { path: 'a.py', oldString: 'def f():\n  return 1', newString: 'x' });
    assert.equal(ws.isError, true);
    assert.match(ws.content, /not found in a\.py.*different whitespace/);
    const partial = await run(fileEditTool, { path: 'a.py', oldString: 'def f():\n    return 2', newString: 'x' });
    assert.match(partial.content, /first line occurs \(line 1\)/);
    const none = await run(fileEditTool, { path: 'a.py', oldString: 'class Nope', newString: 'x' });
    assert.match(none.content, /not found in a\.py\. Read the file with file_read/);
    const empty = await run(fileEditTool, { path: 'a.py', oldString: '', newString: 'x' });
    assert.match(empty.content, /oldString is empty/);
    const same = await run(fileEditTool, { path: 'a.py', oldString: 'def', newString: 'def' });
    assert.match(same.content, /identical/);
    const missing = await run(fileEditTool, { path: 'b.py', oldString: 'a', newString: 'b' });
    assert.match(missing.content, /no such file \(use file_write/);
    await writeFile(join(sb.root, 'bin.dat'), Buffer.from([1, 0, 2]));
    assert.match((await run(fileEditTool, { path: 'bin.dat', oldString: 'a', newString: 'b' })).content, /binary/);
    await writeFile(join(sb.root, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    assert.match((await run(fileEditTool, { path: 'latin1.txt', oldString: 'caf', newString: 'x' })).content, /not valid UTF-8/);

    await writeFile(join(sb.root, 'win.txt'), 'one\r\ntwo\r\nthree\r\n');
    const crlf = await run(fileEditTool, { path: 'win.txt', oldString: 'one\ntwo', newString: 'uno\ndos' });
    assert.equal(crlf.isError, undefined, crlf.content);
    assert.equal(await readFile(join(sb.root, 'win.txt'), 'utf8'), 'uno\r\ndos\r\nthree\r\n');
    assert.equal(await readFile(join(sb.root, 'a.py'), 'utf8'), 'def f():\n    return 1\n');
  }));

test('file_write / file_edit: bad input is an error result', () =>
  withSandbox(async (_sb, run) => {
    const w = await run(fileWriteTool, { path: 'a.txt' });
    assert.match(w.content, /invalid input for file_write: content: .*expected string/);
    const e = await run(fileEditTool, { path: 'a.txt', oldString: 'a', newString: 5, replaceAll: 'yes' });
    assert.match(e.content, /newString: .*expected string/);
    assert.match(e.content, /replaceAll: .*expected boolean/);
  }));
