/**
 * Child process for test/unit/worktrees/kill-merge.test.ts: in the git workspace given, an
 * isolated session writes `count` files, its work is merged, and the process SIGKILLs itself
 * after `killAfter` files were applied (as `kill -9` would stop it mid-merge).
 *
 *   node --import tsx merge-kill-child.ts <workspace> <count> <killAfter>
 */
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { createWorktrees } from '../../src/worktrees/service';
import { secretPathMatcher } from '../../src/tools/sandbox/secrets';
import { DEFAULT_SECRET_PATTERNS } from '../../src/tools/sandbox/secret-patterns';

async function main(root: string, count: number, killAfter: number): Promise<void> {
  const worktrees = createWorktrees({ workspaceRoot: root, dir: join(root, '.legion', 'worktrees'), runId: 'run-1', now: () => new Date().toISOString(), leaveOut: secretPathMatcher(DEFAULT_SECRET_PATTERNS) });
  const isolated = await worktrees.isolate('session-ur-agent__alice__default', 'alice');
  if (!isolated.ok) throw new Error(isolated.error);
  for (let i = 0; i < count; i++) await writeFile(join(isolated.record.root, `f${String(i).padStart(2, '0')}.txt`), `file ${i} by alice\n`);
  const work = await worktrees.collect('session-ur-agent__alice__default');
  if (!work) throw new Error('no work');
  const check = await worktrees.check('session-ur-agent__alice__default', work);
  if (check.kind !== 'clean') throw new Error('conflict');
  process.stdout.write('merging\n');
  await worktrees.apply('session-ur-agent__alice__default', check, {
    afterOp: (index) => { if (index + 1 === killAfter) process.kill(process.pid, 'SIGKILL'); },
  });
  process.stdout.write('merged\n');
}

const [root, count, killAfter] = process.argv.slice(2);
main(root!, Number(count), Number(killAfter)).catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
