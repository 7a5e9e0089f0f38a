import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createWorktrees, type Worktrees } from '../../../src/worktrees/service';
import { userGit } from '../checkpoints/helpers';
import { secretPathMatcher } from '../../../src/tools/sandbox/secrets';
import { DEFAULT_SECRET_PATTERNS } from '../../../src/tools/sandbox/secret-patterns';

export { userGit };

/** A git repository with two committed files and `.legion/` ignored, like a real workspace. */
export async function makeRepo(root: string, files: Record<string, string> = { 'shared.txt': 'one\ntwo\nthree\n', 'README.md': '# demo\n' }): Promise<void> {
  userGit(root, ['init', '-q', '-b', 'main']);
  await write(root, '.gitignore', '.legion/\nbuild/\n');
  for (const [path, text] of Object.entries(files)) await write(root, path, text);
  userGit(root, ['add', '-A']);
  userGit(root, ['commit', '-q', '-m', 'initial']);
}

export async function write(root: string, rel: string, text: string): Promise<void> {
  await mkdir(join(root, rel, '..'), { recursive: true });
  await writeFile(join(root, rel), text);
}

export function worktreesOf(root: string): Worktrees {
  return createWorktrees({ workspaceRoot: root, dir: join(root, '.legion', 'worktrees'), runId: 'run-1', now: () => new Date().toISOString(), leaveOut: secretPathMatcher(DEFAULT_SECRET_PATTERNS) });
}

/** What the user's repository looks like to git: HEAD, branches, index, stash (none of it may change but `legion/*`). */
export function userRepoState(root: string): { head: string; branches: string; staged: string; stash: string; indexTree: string } {
  return {
    head: userGit(root, ['rev-parse', 'HEAD']).trim(),
    branches: userGit(root, ['for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads/main']).trim(),
    staged: userGit(root, ['diff', '--cached', '--name-status']).trim(),
    stash: userGit(root, ['stash', 'list']).trim(),
    indexTree: execFileSync('git', ['write-tree'], { cwd: root, encoding: 'utf8', env: { ...process.env, GIT_OPTIONAL_LOCKS: '0' } }).trim(),
  };
}
