import { spawn } from 'node:child_process';
import { isAbsolute, join } from 'node:path';
import { HARDENING, gitEnv, runGit, type GitPlace, type GitResult } from '../checkpoints/git';

/**
 * The user's git repository as isolation sees it (docs/worktrees.md). Every git call runs with
 * the checkpoints' hardening (no hooks, no fsmonitor, no global or system config, no prompts),
 * so a repository's configuration cannot run code when Legion makes or merges a worktree.
 * Nothing here writes the user's index, branches (other than `legion/*`) or stash: snapshots go
 * through a temporary index (`GIT_INDEX_FILE`).
 */
export interface Repo {
  /** The repository's work tree root (`git rev-parse --show-toplevel`). */
  readonly toplevel: string;
  /** The git directory of that checkout (absolute; a linked worktree's own directory). */
  readonly gitDir: string;
  /** The shared git directory (objects, refs, `worktrees/`). */
  readonly commonDir: string;
  /** The workspace's path inside the repository, `''` or ending with `/`. */
  readonly prefix: string;
}

export const placeOf = (repo: Repo): GitPlace => ({ gitDir: repo.gitDir, workTree: repo.toplevel });

/** Pathspec magic (`:(exclude)`) is needed here; the checkpoints' runner makes pathspecs literal. */
const MAGIC = { GIT_LITERAL_PATHSPECS: '0' };

export function git(place: GitPlace, args: readonly string[], options: { input?: string | Buffer | Promise<string | Buffer>; env?: Record<string, string> } = {}): Promise<GitResult> {
  return runGit(place, args, { ...options, env: { ...MAGIC, ...options.env } });
}

/** The output of a successful call as text, or throws a one-line error. */
export async function gitOut(place: GitPlace, args: readonly string[], options: { input?: string | Buffer; env?: Record<string, string> } = {}): Promise<string> {
  const result = await git(place, args, options);
  if (!result.ok) throw new Error(`git ${args[0]}: ${result.error}`);
  return result.stdout.toString('utf8');
}

/**
 * The repository holding `workspaceRoot`, or an error value saying why there is none (not a git
 * repository, git missing). Discovery is the one call without `GIT_DIR`: git looks upwards.
 */
export function findRepo(workspaceRoot: string): Promise<{ ok: true; repo: Repo } | { ok: false; error: string }> {
  return new Promise((resolve) => {
    const env = gitEnv({ gitDir: '', workTree: workspaceRoot });
    delete env.GIT_DIR;
    delete env.GIT_WORK_TREE;
    env.HOME = workspaceRoot;
    env.XDG_CONFIG_HOME = workspaceRoot;
    const child = spawn('git', [...HARDENING, 'rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-common-dir', '--show-prefix'], {
      cwd: workspaceRoot, env, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', (error) => resolve({ ok: false, error: `git is not available (${error.message})` }));
    child.on('close', (code) => {
      if (code !== 0) {
        const why = Buffer.concat(err).toString('utf8').trim().split('\n').pop() ?? '';
        return resolve({ ok: false, error: `the workspace is not a git repository${why ? ` (${why})` : ''}` });
      }
      const [toplevel, gitDir, common, prefix] = Buffer.concat(out).toString('utf8').split('\n');
      if (!toplevel || !gitDir || !common) return resolve({ ok: false, error: 'the workspace is a bare git repository (no work tree)' });
      const commonDir = isAbsolute(common) ? common : join(workspaceRoot, common);
      resolve({ ok: true, repo: { toplevel, gitDir, commonDir, prefix: prefix ?? '' } });
    });
  });
}
