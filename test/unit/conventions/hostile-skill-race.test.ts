import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../helpers/tmp';
import { createSkills } from '../../../src/conventions/skills';

// A skill's folder in the workspace is the agent's to change while Legion reads it (a sandboxed
// command runs beside the turn). `skill {name, file}` resolves the file inside the skill's folder,
// then reads it: a folder swapped for a symbolic link between the two must not lead the read
// outside the workspace (here: a file standing for ~/.aws/credentials or .legion/web-token).
test('skill files: a folder swapped for a link while the file is read never reads outside', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const ws = join(dir, 'ws');
    const outside = join(dir, 'outside');
    const skills = join(ws, '.claude', 'skills');
    await mkdir(join(skills, 'foo'), { recursive: true });
    await mkdir(outside, { recursive: true });
    await writeFile(join(skills, 'foo', 'SKILL.md'), '---\nname: foo\ndescription: a skill\n---\nbody\n');
    await writeFile(join(skills, 'foo', 'ref.md'), 'harmless\n');
    await writeFile(join(outside, 'SKILL.md'), '---\nname: foo\ndescription: a skill\n---\nbody\n');
    await writeFile(join(outside, 'ref.md'), 'SECRET-OUTSIDE\n');
    // The swapper: foo is the real folder, then a link to the outside folder, over and over.
    const swapper = spawn('python3', ['-c', `
import os, time
base = ${JSON.stringify(skills)}
real = os.path.join(base, 'foo'); keep = os.path.join(base, 'foo.real'); link = os.path.join(base, 'foo.link')
os.symlink(${JSON.stringify(outside)}, link)
end = time.time() + 10
while time.time() < end:
    os.rename(real, keep); os.rename(link, real)
    os.rename(real, link); os.rename(keep, real)
`], { stdio: 'ignore' });
    const catalog = createSkills([{ dir: skills, origin: 'test' }], { workspaceRoot: ws, refuse: () => null });
    let leaked = 0;
    let reads = 0;
    const end = Date.now() + 4_000;
    try {
      while (Date.now() < end) {
        // A read that fails in the swap's gaps is fine (the tool reports an error); only a leak is not.
        const got = await catalog.readFile('foo', 'ref.md').catch(() => ({ ok: false as const, error: 'gone' }));
        if (got.ok) {
          reads += 1;
          if (got.text.includes('SECRET-OUTSIDE')) leaked += 1;
        }
      }
    } finally {
      swapper.kill('SIGKILL');
    }
    assert.ok(reads > 0, 'some reads went through');
    assert.equal(leaked, 0, `${leaked} of ${reads} reads returned the outside file`);
  });
});
