import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { makeSandbox, makeToolContext, type Sandbox } from '../../helpers/tool-context';
import { globTool } from '../../../src/tools/builtin/glob';
import { createGrepTool, grepTool, GREP_MAX_MATCHES } from '../../../src/tools/builtin/grep';
import { createIgnoreFilter } from '../../../src/tools/gitignore';
import { executeTool } from '../../../src/tools/execute-tool';
import type { Tool, ToolResult } from '../../../src/tools/types';

async function withTree(files: Record<string, string | Buffer>, fn: (sb: Sandbox, run: (tool: Tool, input: unknown) => Promise<ToolResult>) => Promise<void>): Promise<void> {
  const sb = await makeSandbox();
  try {
    for (const [rel, content] of Object.entries(files)) {
      await mkdir(dirname(join(sb.root, rel)), { recursive: true });
      await writeFile(join(sb.root, rel), content);
    }
    await fn(sb, (tool, input) => executeTool(tool, input, makeToolContext(sb.root)));
  } finally {
    await sb.cleanup();
  }
}

const TREE: Record<string, string | Buffer> = {
  '.gitignore': 'dist/\n*.log\n!keep.log\nsecret-*\n',
  'src/a.ts': 'export const needle = 1;\n',
  'src/b.ts': 'const other = 2;\n// needle here too\n',
  'src/sub/.gitignore': 'generated.ts\n!secret-ok.ts\n',
  'src/sub/generated.ts': 'needle generated\n',
  'src/sub/c.ts': 'NEEDLE upper\n',
  'src/sub/secret-ok.ts': 'needle unignored by a deeper rule\n',
  'secret-key.ts': 'needle secret\n',
  'dist/out.ts': 'needle in dist\n',
  'debug.log': 'needle in log\n',
  'keep.log': 'needle kept\n',
  'node_modules/pkg/index.ts': 'needle in node_modules\n',
  '.git/config': 'needle in git\n',
  '.github/workflows/ci.yml': 'needle: ci\n',
  'image.bin': Buffer.concat([Buffer.from('needle'), Buffer.from([0, 1, 2])]),
  'docs/readme.md': 'no match here\n',
};

test('gitignore filter: nested files, negations, ignored parent dirs, always-skipped dirs', async () => {
  await withTree(TREE, async (sb) => {
    const f = createIgnoreFilter(sb.root);
    assert.equal(await f.ignores('dist', true), true);
    assert.equal(await f.ignores('dist/out.ts', false), true);
    assert.equal(await f.ignores('debug.log', false), true);
    assert.equal(await f.ignores('keep.log', false), false);
    assert.equal(await f.ignores('src/sub/generated.ts', false), true);
    assert.equal(await f.ignores('src/sub/secret-ok.ts', false), false);
    assert.equal(await f.ignores('secret-key.ts', false), true);
    assert.equal(await f.ignores('node_modules', true), true);
    assert.equal(await f.ignores('a/node_modules/x.js', false), true);
    assert.equal(await f.ignores('.git', true), true);
    assert.equal(await f.ignores('.LEGION', true), true);
    assert.equal(await f.ignores('src/a.ts', false), false);
  });
});

test('glob finds files sorted, with dotfiles, skipping ignored, node_modules, .git and .legion', async () => {
  await withTree(TREE, async (_sb, run) => {
    const all = await run(globTool, { pattern: '**/*' });
    assert.equal(all.isError, undefined, all.content);
    assert.deepEqual(all.content.split('\n'), [
      '.github/workflows/ci.yml',
      '.gitignore',
      'docs/readme.md',
      'image.bin',
      'keep.log',
      'src/a.ts',
      'src/b.ts',
      'src/sub/.gitignore',
      'src/sub/c.ts',
      'src/sub/secret-ok.ts',
    ]);
    const ts = await run(globTool, { pattern: '*.ts', path: 'src' });
    assert.equal(ts.content, 'src/a.ts\nsrc/b.ts');
    assert.equal(ts.summary, '*.ts: 2 files');
    const braces = await run(globTool, { pattern: '**/{a,c}.ts' });
    assert.equal(braces.content, 'src/a.ts\nsrc/sub/c.ts');
    const none = await run(globTool, { pattern: '**/*.rs' });
    assert.equal(none.isError, undefined);
    assert.match(none.content, /No files match/);
  });
});

test('glob refuses escaping patterns and paths; does not follow symlinked dirs', async () => {
  await withTree({ 'a.txt': '' }, async (sb, run) => {
    await symlink(sb.outside, join(sb.root, 'out'));
    await symlink(join(sb.root, '.legion'), join(sb.root, 'state'));
    for (const pattern of ['../**', '/etc/*', `${sb.outside}/*`, 'src/../../**', '~/*', '{..,x}/*', 'a\0b', 'x'.repeat(2000)]) {
      const r = await run(globTool, { pattern });
      assert.equal(r.isError, true, pattern);
    }
    assert.match((await run(globTool, { pattern: '*', path: '..' })).content, /outside the workspace/);
    assert.match((await run(globTool, { pattern: '*', path: 'out' })).content, /symlink/);
    assert.match((await run(globTool, { pattern: '*', path: '.legion' })).content, /\.legion/);
    assert.match((await run(globTool, { pattern: '*', path: 'a.txt' })).content, /is a file, not a directory/);
    const all = await run(globTool, { pattern: '**' });
    assert.equal(all.content, 'a.txt'); // symlinks are neither followed nor listed
    const deep = await run(globTool, { pattern: '**/sentinel.txt' });
    assert.match(deep.content, /No files match/);
    const legion = await run(globTool, { pattern: '**/secret.json' });
    assert.match(legion.content, /No files match/);
  });
});

test('grep prints file:line: text, skipping binaries, ignored files, node_modules, .git and .legion', async () => {
  await withTree(TREE, async (sb, run) => {
    await writeFile(join(sb.root, '.legion', 'runs', 'x.jsonl'), 'needle in legion\n');
    const r = await run(grepTool, { pattern: 'needle' });
    assert.equal(r.isError, undefined, r.content);
    assert.deepEqual(r.content.split('\n'), [
      '.github/workflows/ci.yml:1: needle: ci',
      'keep.log:1: needle kept',
      'src/a.ts:1: export const needle = 1;',
      'src/b.ts:2: // needle here too',
      'src/sub/secret-ok.ts:1: needle unignored by a deeper rule',
    ]);
    assert.match(r.summary ?? '', /5 matches \(\d+ files searched, 1 binary skipped\)/);

    const ci = await run(grepTool, { pattern: 'needle', path: 'src/sub', ignoreCase: true, glob: '*.ts' });
    assert.equal(ci.content, 'src/sub/c.ts:1: NEEDLE upper\nsrc/sub/secret-ok.ts:1: needle unignored by a deeper rule');
    const globbed = await run(grepTool, { pattern: 'needle', glob: 'src/*.ts' });
    assert.equal(globbed.content, 'src/a.ts:1: export const needle = 1;\nsrc/b.ts:2: // needle here too');
    const explicit = await run(grepTool, { pattern: 'needle', path: 'dist/out.ts' });
    assert.equal(explicit.content, 'dist/out.ts:1: needle in dist');
    const regex = await run(grepTool, { pattern: '^const \\w+ = \\d;$' });
    assert.equal(regex.content, 'src/b.ts:1: const other = 2;');
    const none = await run(grepTool, { pattern: 'haystack' });
    assert.equal(none.isError, undefined);
    assert.match(none.content, /No matches for \/haystack\/ in the workspace/);
  });
});

test('grep: invalid regex, bad glob, escapes and bad input are error results', async () => {
  await withTree({ 'a.txt': 'x\n' }, async (_sb, run) => {
    const bad = await run(grepTool, { pattern: '(unclosed' });
    assert.equal(bad.isError, true);
    assert.match(bad.content, /invalid regular expression: \/\(unclosed\/: Unterminated group/);
    assert.match((await run(grepTool, { pattern: 'x', glob: '../*' })).content, /glob .*\.\./);
    assert.match((await run(grepTool, { pattern: 'x', path: '../outside' })).content, /outside the workspace/);
    assert.match((await run(grepTool, { pattern: 'x', path: '.legion' })).content, /\.legion/);
    assert.match((await run(grepTool, { pattern: 'x', path: 'nope' })).content, /no such file or directory/);
    assert.match((await run(grepTool, { pattern: '' })).content, /pattern is empty/);
    assert.match((await run(grepTool, { pattern: 5 })).content, /invalid input for grep: pattern/);
  });
});

test('grep caps matches with a note and stops a catastrophic pattern instead of hanging', async () => {
  const many = Array.from({ length: GREP_MAX_MATCHES + 50 }, (_, i) => `hit ${i}`).join('\n');
  await withTree({ 'many.txt': many, 'evil.txt': `${'a'.repeat(40)}!\n` }, async (_sb, run) => {
    const capped = await run(grepTool, { pattern: 'hit', path: 'many.txt' });
    const lines = capped.content.split('\n');
    assert.equal(lines.length, GREP_MAX_MATCHES + 1);
    assert.match(lines.at(-1)!, /match limit reached/);
    const started = Date.now();
    // 300 ms is safe under load: the pattern backtracks for hours, so only the limit can end it; the bound below
    // only proves it was stopped (30 s: a loaded machine never reaches it, the pattern would).
    const evil = await run(createGrepTool({ regexTimeoutMs: 300, secretPath: () => false }), { pattern: '^(a+)+$', path: 'evil.txt' });
    assert.equal(evil.isError, true);
    assert.match(evil.content, /took longer than \d+ ms.*catastrophic backtracking/);
    assert.ok(Date.now() - started < 30_000);
  });
});
