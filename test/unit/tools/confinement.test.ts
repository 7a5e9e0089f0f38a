import '../../helpers/own-home';
import { secretPathMatcher } from '../../../src/tools/sandbox/secrets';
import { DEFAULT_SECRET_PATTERNS } from '../../../src/tools/sandbox/secret-patterns';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeSandbox, makeToolContext, SENTINEL_CONTENT, type Sandbox } from '../../helpers/tool-context';
import { createBuiltinTools } from '../../../src/tools/registry';
import { createMemoryTodoStore } from '../../../src/tools/todo-store';
import { executeTool } from '../../../src/tools/execute-tool';
import { resolveWorkspacePath } from '../../../src/tools/path-safety';
import { writeFileConfined } from '../../../src/tools/confined-write';
import { fileWriteTool } from '../../../src/tools/builtin/file-write';
import { fileEditTool } from '../../../src/tools/builtin/file-edit';
import { fileReadTool } from '../../../src/tools/builtin/file-read';
import { fileDeleteTool } from '../../../src/tools/builtin/file-delete';
import type { Tool } from '../../../src/tools/types';

const tools = new Map(createBuiltinTools({ secretPath: secretPathMatcher(DEFAULT_SECRET_PATTERNS),  todoStore: createMemoryTodoStore(), sandbox: 'none' }).map((t) => [t.name, t] as const));

/** Each path-taking tool with an input that would do harm if `path` escaped. */
const PATH_TOOLS: [string, (path: string) => Record<string, unknown>][] = [
  ['file_read', (path) => ({ path })],
  ['file_write', (path) => ({ path, content: 'PWNED' })],
  ['file_edit', (path) => ({ path, oldString: 'do not touch', newString: 'PWNED' })],
  ['file_list', (path) => ({ path })],
  ['file_delete', (path) => ({ path })],
  ['glob', (path) => ({ pattern: '**', path })],
  ['grep', (path) => ({ pattern: '.', path })],
];

async function prepareTraps(sb: Sandbox): Promise<void> {
  await symlink(sb.outside, join(sb.root, 'out-dir'));
  await symlink(join(sb.outside, 'sentinel.txt'), join(sb.root, 'out-file'));
  await symlink(join(sb.outside, 'not-yet'), join(sb.root, 'dangling'));
  await symlink(join(sb.root, '.legion'), join(sb.root, 'to-legion'));
  await symlink('../outside/sentinel.txt', join(sb.root, 'rel-out'));
}

function attackPaths(sb: Sandbox): string[] {
  return [
    '..', '../', '../outside', '../outside/sentinel.txt', 'a/../../outside/sentinel.txt', './../outside/sentinel.txt',
    join(sb.outside, 'sentinel.txt'), sb.outside, '/etc/passwd', '/', `${sb.root}/../outside/sentinel.txt`,
    '~', '~/', '~/.ssh/id_rsa', '~root',
    'out-dir', 'out-dir/sentinel.txt', 'out-dir/new/deep.txt', 'out-file', 'rel-out', 'dangling', 'dangling/child.txt',
    'to-legion', 'to-legion/secret.json',
    '.legion', '.legion/', '.legion/secret.json', './.legion/secret.json', 'x/../.legion/secret.json', '.LEGION/secret.json',
    '.Legion/secret.json', '.legion./secret.json', '.legion /secret.json', '.legion'.normalize('NFD') + '/secret.json',
    '\uFF0Elegion/secret.json', '.le\u200Dgion/secret.json', '.legion\\secret.json', 'sub/.legion/x',
    'a\0b', 'sentinel.txt\0', 'x'.repeat(100_000), '../'.repeat(5000) + 'etc/passwd',
  ];
}

test('every path tool refuses every escape, leaves outside and .legion untouched, leaks nothing', async () => {
  const sb = await makeSandbox();
  try {
    await prepareTraps(sb);
    const before = await sb.outsideSnapshot();
    const ctx = makeToolContext(sb.root);
    let attempts = 0;
    for (const [name, inputFor] of PATH_TOOLS) {
      const tool = tools.get(name)!;
      for (const path of attackPaths(sb)) {
        const r = await executeTool(tool, inputFor(path), ctx);
        attempts += 1;
        const label = `${name} ${JSON.stringify(path.slice(0, 60))}`;
        assert.equal(r.isError, true, `${label}: ${r.content.slice(0, 200)}`);
        assert.match(r.content, /outside the workspace|through a symlink|inside \.legion|"~"|NUL byte|too long|workspace root/, `${label}: ${r.content.slice(0, 200)}`);
        assert.doesNotMatch(r.content, /0xOUTSIDE|legion-state|PWNED/, label);
        assert.ok(r.content.length < 2000, label);
      }
    }
    assert.ok(attempts >= 7 * 40);
    assert.equal(await sb.outsideSnapshot(), before);
    assert.equal(await readFile(join(sb.root, '.legion', 'secret.json'), 'utf8'), '{"secret":"legion-state"}\n');
    assert.deepEqual((await readdir(join(sb.root, '.legion'))).sort(), ['runs', 'secret.json']);
  } finally {
    await sb.cleanup();
  }
});

test('a symlink created between the check and the call is caught by the tool itself', async () => {
  const sb = await makeSandbox();
  try {
    const ctx = makeToolContext(sb.root);
    const swapToOutside = async (name: string) => {
      await rename(join(sb.root, name), join(sb.root, `${name}-was`));
      await symlink(sb.outside, join(sb.root, name));
    };
    const calls: [Tool, Record<string, unknown>][] = [
      [fileWriteTool, { path: 'w/new.txt', content: 'PWNED' }],
      [fileEditTool, { path: 'e/sentinel.txt', oldString: 'do not touch', newString: 'PWNED' }],
      [fileReadTool, { path: 'r/sentinel.txt' }],
      [fileDeleteTool, { path: 'd/sentinel.txt' }],
    ];
    for (const [tool, input] of calls) {
      const dir = String(input.path).split('/')[0]!;
      await mkdir(join(sb.root, dir));
      await writeFile(join(sb.root, dir, 'sentinel.txt'), 'inside copy\n');
      const checked = await resolveWorkspacePath(sb.root, String(input.path));
      assert.ok(checked.ok, 'the first check passes');
      await swapToOutside(dir);
      const r = await tool.execute(input as never, ctx);
      assert.equal(r.isError, true, `${tool.name}: ${r.content}`);
      assert.match(r.content, /symlink/);
      assert.doesNotMatch(r.content, /0xOUTSIDE/);
    }
    // A file replaced by a symlink after the check: read and write refuse it.
    await writeFile(join(sb.root, 'plain.txt'), 'x');
    assert.ok((await resolveWorkspacePath(sb.root, 'plain.txt')).ok);
    await rename(join(sb.root, 'plain.txt'), join(sb.root, 'plain-was.txt'));
    await symlink(join(sb.outside, 'sentinel.txt'), join(sb.root, 'plain.txt'));
    assert.equal((await fileReadTool.execute({ path: 'plain.txt' }, ctx)).isError, true);
    assert.equal((await fileWriteTool.execute({ path: 'plain.txt', content: 'PWNED' }, ctx)).isError, true);
    assert.equal(await readFile(join(sb.outside, 'sentinel.txt'), 'utf8'), SENTINEL_CONTENT);
    assert.deepEqual(await readdir(sb.outside), ['sentinel.txt']);
  } finally {
    await sb.cleanup();
  }
});

test('writeFileConfined re-checks after mkdir and again before the rename', async () => {
  const sb = await makeSandbox();
  try {
    const swap = (dir: string) => async () => {
      await rename(join(sb.root, dir), join(sb.root, `${dir}-moved`));
      await symlink(sb.outside, join(sb.root, dir));
    };
    const afterMkdir = await writeFileConfined(sb.root, 'm/sub/file.txt', 'PWNED', { afterMkdir: swap('m') });
    assert.equal(afterMkdir.ok, false);
    if (!afterMkdir.ok) assert.match(afterMkdir.error, /symlink/);

    await mkdir(join(sb.root, 't'));
    const afterTemp = await writeFileConfined(sb.root, 't/file.txt', 'PWNED', { afterTempWrite: swap('t') });
    assert.equal(afterTemp.ok, false);
    if (!afterTemp.ok) assert.match(afterTemp.error, /changed while being written/);

    assert.deepEqual(await readdir(sb.outside), ['sentinel.txt']);
    assert.equal(await readFile(join(sb.outside, 'sentinel.txt'), 'utf8'), SENTINEL_CONTENT);
    const ok = await writeFileConfined(sb.root, 'fine/file.txt', 'ok');
    assert.deepEqual(ok, { ok: true, absolute: join(sb.root, 'fine', 'file.txt'), relative: 'fine/file.txt', created: true, bytes: 2 });
  } finally {
    await sb.cleanup();
  }
});

test('shell cannot be pointed elsewhere: cwd is the workspace whatever the input says', async () => {
  const sb = await makeSandbox();
  try {
    const r = await executeTool(tools.get('shell')!, { command: 'pwd', cwd: sb.outside }, makeToolContext(sb.root));
    assert.equal(r.isError, true);
    assert.match(r.content, /Unrecognized key: "cwd"/);
    const ok = await executeTool(tools.get('shell')!, { command: 'pwd' }, makeToolContext(sb.root));
    assert.equal(ok.content, `${sb.root}\n[exit code 0]`);
  } finally {
    await sb.cleanup();
  }
});
