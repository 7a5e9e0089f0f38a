import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, open, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { makeSandbox, makeToolContext, type Sandbox } from '../../helpers/tool-context';
import { fileReadTool, FILE_READ_MAX_LINE_CHARS } from '../../../src/tools/builtin/file-read';
import { executeTool } from '../../../src/tools/execute-tool';
import type { ToolResult } from '../../../src/tools/types';

async function withSandbox(fn: (sb: Sandbox, read: (input: unknown, limit?: number) => Promise<ToolResult>) => Promise<void>): Promise<void> {
  const sb = await makeSandbox();
  const read = (input: unknown, limit = 30_000) =>
    executeTool(fileReadTool, input, makeToolContext(sb.root, { limits: { shellTimeoutMs: 10_000, toolOutputLimit: limit } }));
  try {
    await fn(sb, read);
  } finally {
    await sb.cleanup();
  }
}

test('file_read numbers lines cat -n style and honours offset/limit', () =>
  withSandbox(async (sb, read) => {
    await writeFile(join(sb.root, 'a.txt'), 'one\ntwo\r\nthree\nfour');
    const all = await read({ path: 'a.txt' });
    assert.equal(all.isError, undefined);
    assert.equal(all.content, '     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour');
    assert.equal(all.summary, 'a.txt: lines 1-4');

    const mid = await read({ path: 'a.txt', offset: 2, limit: 2 });
    assert.equal(mid.content.split('\n').slice(0, 2).join('\n'), '     2\ttwo\n     3\tthree');
    assert.match(mid.content, /continue with offset=4/);

    const tail = await read({ path: 'a.txt', offset: 4 });
    assert.equal(tail.content, '     4\tfour');

    const past = await read({ path: 'a.txt', offset: 9 });
    assert.equal(past.isError, true);
    assert.match(past.content, /has 4 lines; offset 9 is past the end/);
  }));

test('file_read: empty file, directory, missing file, binary file, FIFO', () =>
  withSandbox(async (sb, read) => {
    await writeFile(join(sb.root, 'empty.txt'), '');
    assert.match((await read({ path: 'empty.txt' })).content, /empty/);
    await mkdir(join(sb.root, 'dir'));
    const dir = await read({ path: 'dir' });
    assert.equal(dir.isError, true);
    assert.match(dir.content, /is a directory; use file_list/);
    const missing = await read({ path: 'nope.txt' });
    assert.equal(missing.isError, true);
    assert.match(missing.content, /no such file.*file_list or glob/);
    await writeFile(join(sb.root, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
    const binary = await read({ path: 'image.png' });
    assert.equal(binary.isError, true);
    assert.match(binary.content, /binary file \(7 bytes\)/);
    execFileSync('mkfifo', [join(sb.root, 'pipe')]);
    const fifo = await read({ path: 'pipe' });
    assert.equal(fifo.isError, true);
    assert.match(fifo.content, /not a regular file/);
  }));

test('file_read cuts very long lines and stops at the output limit with a note', () =>
  withSandbox(async (sb, read) => {
    await writeFile(join(sb.root, 'long.txt'), `${'x'.repeat(FILE_READ_MAX_LINE_CHARS + 500)}\nshort\n`);
    const long = await read({ path: 'long.txt' });
    assert.match(long.content, /\(line cut at 2000 characters\)/);
    assert.match(long.content, /     2\tshort/);
    assert.match(long.content, /\[1 line cut at 2000 characters\]/);

    await writeFile(join(sb.root, 'many.txt'), Array.from({ length: 500 }, (_, i) => `line ${i + 1} ${'y'.repeat(40)}`).join('\n'));
    const capped = await read({ path: 'many.txt' }, 2000);
    assert.ok(capped.content.length <= 2000, `content ${capped.content.length} chars`);
    const m = /output limit reached after line (\d+); continue with offset=(\d+)/.exec(capped.content);
    assert.ok(m, capped.content.slice(-200));
    assert.equal(Number(m[2]), Number(m[1]) + 1);
    const next = await read({ path: 'many.txt', offset: Number(m[2]), limit: 1 });
    assert.match(next.content, new RegExp(`^\\s+${m[2]}\\tline ${m[2]} `));
  }));

test('file_read of a 50 MB file streams: capped, a note, bounded memory', () =>
  withSandbox(async (sb, read) => {
    const path = join(sb.root, 'big.log');
    const handle = await open(path, 'w');
    const lineText = (n: number) => `line ${String(n).padStart(7, '0')} ${'z'.repeat(86)}\n`; // 100 bytes
    for (let block = 0; block < 500; block += 1) {
      let chunk = '';
      for (let i = 0; i < 1000; i += 1) chunk += lineText(block * 1000 + i + 1);
      await handle.write(chunk);
    }
    await handle.close();

    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
    const started = Date.now();
    const first = await read({ path: 'big.log' });
    const deep = await read({ path: 'big.log', offset: 499_998, limit: 5 });
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);

    assert.equal(first.isError, undefined);
    assert.ok(first.content.length <= 30_000);
    assert.match(first.content, /^\s+1\tline 0000001 /);
    assert.match(first.content, /output limit reached after line \d+; continue with offset=\d+/);
    assert.equal(deep.content.split('\n').length, 3);
    assert.match(deep.content, /499998\tline 0499998/);
    assert.match(deep.content, /500000\tline 0500000/);
    assert.ok(peak - baseline < 40 * 1024 * 1024, `rss grew by ${Math.round((peak - baseline) / 1e6)} MB`);
    assert.ok(Date.now() - started < 5000);
  }));

test('file_read of a 20 MB single-line file stays bounded', () =>
  withSandbox(async (sb, read) => {
    const handle = await open(join(sb.root, 'one-line.min.js'), 'w');
    const block = 'a'.repeat(1024 * 1024);
    for (let i = 0; i < 20; i += 1) await handle.write(block);
    await handle.close();
    const r = await read({ path: 'one-line.min.js' });
    assert.equal(r.isError, undefined);
    assert.ok(r.content.length < 2200);
    assert.match(r.content, /line cut at 2000 characters/);
  }));

test('file_read: bad input is an error result quoting the problem', () =>
  withSandbox(async (_sb, read) => {
    const cases: [unknown, RegExp][] = [
      [{}, /path: Invalid input: expected string, received undefined/],
      [{ path: 1 }, /path: .*expected string/],
      [{ path: 'a', offset: 0 }, /offset: .*>=1/],
      [{ path: 'a', limit: 1.5 }, /limit: .*int/i],
      [{ path: 'a', extra: true }, /Unrecognized key: "extra"/],
      ['a.txt', /expected object, received string/],
      [null, /expected object/],
    ];
    for (const [input, pattern] of cases) {
      const r = await read(input);
      assert.equal(r.isError, true, JSON.stringify(input));
      assert.match(r.content, /^invalid input for file_read: /);
      assert.match(r.content, pattern);
    }
  }));
