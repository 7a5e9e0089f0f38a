import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { lstatSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { readChecked } from '../../../src/conventions/instructions';

// AGENTS.md files of the workspace go into every agent's instructions, read by Legion itself
// (unsandboxed) at each model request where they changed. A sandboxed command running meanwhile
// swaps AGENTS.md between a file and a link to a file outside (standing for ~/.aws/credentials):
// a link seen by the check is followed only inside; one swapped in after the check must not be read.
test('instructions: AGENTS.md swapped for a link between the check and the read is never read outside', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const ws = join(dir, 'ws');
    await mkdir(join(ws, 'docs'), { recursive: true });
    await writeFile(join(dir, 'credentials'), 'SECRET-OUTSIDE\n');
    await writeFile(join(ws, 'docs', 'AGENTS.md'), 'be kind\n');
    const swapper = spawn('python3', ['-c', `
import os, time
d = ${JSON.stringify(join(ws, 'docs'))}
real = os.path.join(d, 'AGENTS.md'); keep = os.path.join(d, 'keep.md'); link = os.path.join(d, 'link.md')
os.symlink(${JSON.stringify(join(dir, 'credentials'))}, link)
end = time.time() + 10
while time.time() < end:
    os.rename(real, keep); os.rename(link, real)
    os.rename(real, link); os.rename(keep, real)
`], { stdio: 'ignore' });
    const deps = { refuse: () => null, notice: () => undefined };
    let reads = 0;
    let leaked = 0;
    const end = Date.now() + 4_000;
    try {
      while (Date.now() < end) {
        let stat;
        try {
          stat = lstatSync(join(ws, 'docs', 'AGENTS.md'));
        } catch {
          continue;
        }
        const got = readChecked(join(ws, 'docs', 'AGENTS.md'), 'the folder docs/', stat, ws, deps);
        if (!got) continue;
        reads += 1;
        if (got.text.includes('SECRET-OUTSIDE')) leaked += 1;
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      swapper.kill('SIGKILL');
    }
    assert.ok(reads > 0, 'some reads went through');
    assert.equal(leaked, 0, `${leaked} of ${reads} reads returned the outside file`);
  });
});
