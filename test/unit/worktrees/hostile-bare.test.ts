import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { makeRepo, worktreesOf, write } from './helpers';

// A workspace that is a folder of a repository (a monorepo's package): git looks for `.git` there
// and, before going up, takes the folder itself for a git directory when it holds HEAD, objects/
// and refs/. Whoever wrote them chose the config git reads: a filter whose clean command
// `git add -A` runs. Legion's own git (isolation's snapshot, unsandboxed) must not run it.
test('isolation never uses a folder shaped like a git directory in the workspace as the repository', async () => {
  await withTempDir(async (top) => {
    await makeRepo(top);
    const ws = join(top, 'pkg');
    const flag = join(top, 'PWNED');
    await write(ws, 'src/a.txt', 'hello\n');
    await write(ws, 'HEAD', 'ref: refs/heads/main\n');
    await mkdir(join(ws, 'objects'), { recursive: true });
    await mkdir(join(ws, 'refs'), { recursive: true });
    await write(ws, 'config', `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n[filter "x"]\n\tclean = "touch ${flag}; cat"\n`);
    await write(ws, '.gitattributes', '* filter=x\n');
    const result = await worktreesOf(ws).isolate('session-ur-agent__alice__default', 'alice');
    await assert.rejects(stat(flag), 'the planted filter ran');
    assert.equal(result.ok, false, 'refused, never run on the planted repository');
    assert.match(result.ok ? '' : result.error, /bare repository/);
  });
});
