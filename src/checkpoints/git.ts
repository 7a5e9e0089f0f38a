import { spawn } from 'node:child_process';
import { hostPath } from '../tools/host-path';

/**
 * The git CLI, run against the shadow repository only (docs/undo.md). Every call gets its own
 * `GIT_DIR` (the shadow repository) and `GIT_WORK_TREE` (the workspace) and an environment that
 * reads no user, system or repository configuration that could run code: no system or global
 * config, `HOME` pointed at the shadow directory, no hooks, no fsmonitor, no pager, no prompts.
 * Variables git would obey from the caller's environment (GIT_INDEX_FILE, GIT_OBJECT_DIRECTORY…)
 * are dropped, so the user's own repository is never read or written.
 */
export interface GitPlace {
  /** The shadow repository (`.legion/checkpoints/git`). */
  readonly gitDir: string;
  /** The workspace root, the shadow repository's work tree. */
  readonly workTree: string;
}

export type GitResult =
  | { readonly ok: true; readonly stdout: Buffer; readonly stderr: string }
  | { readonly ok: false; readonly code: number | null; readonly stdout: Buffer; readonly stderr: string; readonly error: string };

/** `-c` options given to every call: they win over any config file. */
export const HARDENING: readonly string[] = [
  '-c', 'core.hooksPath=/dev/null',
  '-c', 'core.fsmonitor=false',
  '-c', 'core.pager=cat',
  '-c', 'core.autocrlf=false',
  '-c', 'core.safecrlf=false',
  '-c', 'core.symlinks=true',
  '-c', 'core.fileMode=true',
  '-c', 'core.quotePath=false',
  '-c', 'commit.gpgSign=false',
  '-c', 'gc.auto=0',
  '-c', 'maintenance.auto=false',
  '-c', 'protocol.allow=never',
  '-c', 'filter.lfs.required=false',
  // A folder holding HEAD, objects/ and refs/ is a git directory to git's discovery, with no
  // `.git` anywhere: whoever wrote it chose the config (filters, core.worktree) that git then
  // reads. Only a repository found through a `.git` entry, or named by GIT_DIR, is used (git ≥ 2.38).
  '-c', 'safe.bareRepository=explicit',
];

/** The environment of a git call: nothing inherited that git reads, except PATH (without the workspace's folders, host-path.ts) and the locale basics. */
export function gitEnv(place: GitPlace, extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const key of ['SYSTEMROOT', 'TMPDIR', 'LANG', 'LC_ALL', 'TZ']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  // git, and what git runs, found outside the workspace only: a sandboxed command may write there.
  env.PATH = hostPath(process.env.PATH ?? '', place.workTree);
  return {
    ...env,
    GIT_DIR: place.gitDir,
    GIT_WORK_TREE: place.workTree,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    HOME: place.gitDir,
    XDG_CONFIG_HOME: place.gitDir,
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_LITERAL_PATHSPECS: '1',
    GIT_AUTHOR_NAME: 'Legion', GIT_AUTHOR_EMAIL: 'checkpoints@legion.local',
    GIT_COMMITTER_NAME: 'Legion', GIT_COMMITTER_EMAIL: 'checkpoints@legion.local',
    ...extra,
  };
}

/**
 * Run `git <args>` in the shadow repository. Never throws: a failure is a value with git's message.
 * `input` may be a promise: the process starts at once and gets its input when known (a rejected
 * promise: no input).
 */
export function runGit(place: GitPlace, args: readonly string[], options: { input?: string | Buffer | Promise<string | Buffer>; env?: Record<string, string> } = {}): Promise<GitResult> {
  return new Promise((resolve) => {
    const child = spawn('git', [...HARDENING, ...args], {
      cwd: place.workTree,
      env: gitEnv(place, options.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    let failed: string | undefined;
    child.on('error', (error) => { failed = error.message; });
    child.stdin.on('error', () => undefined);
    Promise.resolve(options.input ?? '').then((input) => child.stdin.end(input), () => child.stdin.end());
    child.on('close', (code) => {
      const stdout = Buffer.concat(out);
      const stderr = Buffer.concat(err).toString('utf8').trim();
      if (code === 0 && failed === undefined) return resolve({ ok: true, stdout, stderr });
      const error = failed ?? (stderr.split('\n').filter(Boolean).pop() || `git ${args[0]} exited with ${code}`);
      resolve({ ok: false, code, stdout, stderr, error });
    });
  });
}

/** The output of a successful call as text, or throws a one-line error (for use inside guarded sections). */
export async function gitText(place: GitPlace, args: readonly string[], options?: { input?: string | Buffer }): Promise<string> {
  const result = await runGit(place, args, options);
  if (!result.ok) throw new Error(`git ${args[0]}: ${result.error}`);
  return result.stdout.toString('utf8');
}
