import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { promises } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { APP_DIR } from '../../helpers/app-harness';
import { testUserDir } from '../../helpers/trust';
import { surelyAbsent } from '../../../src/storage/absent';
import { initWorkspace } from '../../../src/collective/init';
import { composeApp } from '../../../src/cli/compose';
import type { CommandContext } from '../../../src/cli/command';

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

/** What `run` made `fs.promises` reject with ENOENT: the call and its path (every promised read goes through these). */
async function failedReads(run: () => Promise<void>): Promise<string[]> {
  const failed: string[] = [];
  const names = ['readFile', 'readdir', 'stat', 'lstat', 'open', 'access', 'realpath', 'opendir'] as const;
  const saved = names.map((name) => [name, promises[name]] as const);
  const table = promises as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  for (const [name, original] of saved) {
    table[name] = (...args: unknown[]) => (original as (...a: unknown[]) => Promise<unknown>)(...args).catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') failed.push(`${name} ${String(args[0])}`);
      throw error;
    });
  }
  // Modules import these by name from node:fs/promises: their bindings follow the table.
  syncBuiltinESMExports();
  try {
    await run();
  } finally {
    for (const [name, original] of saved) table[name] = original as (...a: unknown[]) => Promise<unknown>;
    syncBuiltinESMExports();
  }
  return failed;
}

test('a start of a legion init workspace makes no promised read that fails for a missing file', async () => {
  await withTempDir(async (dir) => {
    const workspaceRoot = join(dir, 'ws');
    const home = join(dir, 'home');
    await mkdir(workspaceRoot, { recursive: true });
    await mkdir(home, { recursive: true });
    const env = { HOME: home, PATH: process.env.PATH, LEGION_TEST: '1' };
    const init = await initWorkspace({ appDir: APP_DIR, workspaceRoot, userDir: testUserDir(home) });
    assert.equal(init.trustProblem, undefined);
    const context: CommandContext = {
      args: { command: 'start', positionals: [], flags: new Map(), global: { help: false, version: false, plain: false } },
      io: { stdout: () => undefined, stderr: () => undefined, cwd: workspaceRoot, isTTY: false, env },
      appDir: APP_DIR,
      workspaceRoot,
    };
    // What a start composes before its first frame (start-screen.ts), for a new run and then the run resumed.
    for (const newRun of [true, false]) {
      let runId = '';
      const failed = await failedReads(async () => {
        const app = await composeApp(context, { newRun });
        runId = app.runId;
        await app.close('test');
      });
      assert.deepEqual(failed, [], `run ${runId} (${newRun ? 'new' : 'resumed'}): promised reads that found nothing`);
    }
  });
});
