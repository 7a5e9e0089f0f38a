import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Why no sandbox can be made on this machine. */
export type SandboxCause = 'unsupported-platform' | 'bwrap-missing' | 'userns-disabled' | 'bwrap-failed';

export type SandboxProbe =
  | { readonly kind: 'available'; readonly bwrap: string; readonly disableUserns: boolean }
  | { readonly kind: 'unavailable'; readonly cause: SandboxCause; readonly reason: string };

/** What probing needs from the system, passed in so tests can simulate a machine without bubblewrap. */
export interface ProbeDeps {
  readonly platform: NodeJS.Platform;
  /** The PATH to search for `bwrap`. */
  readonly path: string | undefined;
  /** Run a program to completion; never rejects. */
  run(file: string, args: readonly string[]): Promise<{ readonly code: number | null; readonly output: string }>;
  isExecutable(file: string): boolean;
}

export function systemProbeDeps(env: NodeJS.ProcessEnv = process.env): ProbeDeps {
  return {
    platform: process.platform,
    path: env.PATH,
    run: runQuiet,
    isExecutable(file) {
      try {
        accessSync(file, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    },
  };
}

/** The arguments of the trial run: the namespaces and binds every sandboxed call uses. */
const TRIAL = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-all', '--unshare-user', '--cap-drop', 'ALL', '--die-with-parent', '--', 'true'];

/**
 * Can this machine run bubblewrap sandboxes? Finds `bwrap` on PATH and runs `true` in a
 * trial sandbox, so a kernel without (unprivileged) user namespaces is found before the
 * first command rather than by it. Only Linux has bubblewrap; macOS's sandbox-exec is not
 * supported yet (see docs/sandbox.md).
 */
export async function probeSandbox(deps: ProbeDeps): Promise<SandboxProbe> {
  if (deps.platform !== 'linux') {
    return { kind: 'unavailable', cause: 'unsupported-platform', reason: `no sandbox for ${deps.platform} yet (Linux bubblewrap only)` };
  }
  const bwrap = findOnPath('bwrap', deps);
  if (!bwrap) {
    return { kind: 'unavailable', cause: 'bwrap-missing', reason: 'bubblewrap is not installed (no `bwrap` on PATH; e.g. `apt-get install bubblewrap`)' };
  }
  const trial = await deps.run(bwrap, TRIAL);
  if (trial.code !== 0) {
    const said = trial.output.trim().split('\n')[0] ?? '';
    if (/namespace|uid map|setting up uid|permission denied|operation not permitted/i.test(said)) {
      return {
        kind: 'unavailable', cause: 'userns-disabled',
        reason: `user namespaces are disabled for this user (bwrap: ${said}; see kernel.unprivileged_userns_clone, user.max_user_namespaces or AppArmor's userns restriction)`,
      };
    }
    return { kind: 'unavailable', cause: 'bwrap-failed', reason: `bubblewrap does not run here (${said || `exit ${trial.code}`})` };
  }
  const help = await deps.run(bwrap, ['--help']);
  return { kind: 'available', bwrap, disableUserns: help.output.includes('--disable-userns') };
}

function findOnPath(name: string, deps: ProbeDeps): string | undefined {
  for (const dir of (deps.path ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    if (deps.isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** A trial that takes longer than this counts as failed (a hung bwrap must not hang Legion's start). */
const PROBE_TIMEOUT_MS = 10_000;

function runQuiet(file: string, args: readonly string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: PROBE_TIMEOUT_MS, killSignal: 'SIGKILL' });
    const take = (chunk: Buffer) => {
      if (output.length < 4000) output += chunk.toString('utf8');
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', (error) => resolve({ code: null, output: error.message }));
    child.on('close', (code) => resolve({ code, output }));
  });
}
