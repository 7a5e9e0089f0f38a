import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/** What one hook command did. */
export type CommandOutcome =
  | { readonly kind: 'exit'; readonly code: number; readonly stdout: string; readonly stderr: string }
  | { readonly kind: 'timeout'; readonly stderr: string }
  | { readonly kind: 'aborted' }
  | { readonly kind: 'error'; readonly message: string };

/** Bytes of stdout and of stderr kept from one hook. */
const OUTPUT_CAP = 64 * 1024;
let shell: string | undefined;
/** bash, else sh: looked up at the first hook, not at start (a start snapshot would keep the build machine's answer). */
const hookShell = (): string => (shell ??= existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh');

/**
 * Run one hook command with `bash -c` (sh without bash) in `cwd`, the event as JSON on stdin,
 * `env` as its whole environment. At `timeoutMs` (or when `signal` aborts) its process group
 * is killed (SIGKILL) and the outcome says so at once: a hook never holds a turn longer.
 * Never rejects.
 */
export function runHookCommand(options: {
  readonly command: string;
  readonly input: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}): Promise<CommandOutcome> {
  return new Promise((resolve) => {
    if (options.signal.aborted) return resolve({ kind: 'aborted' });
    let stdout = '';
    let stderr = '';
    let settled = false;
    const child = spawn(hookShell(), ['-c', options.command], { cwd: options.cwd, env: { ...options.env }, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const kill = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch { /* gone */ }
    };
    const finish = (outcome: CommandOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const timer = setTimeout(() => {
      kill();
      finish({ kind: 'timeout', stderr });
    }, options.timeoutMs);
    const onAbort = (): void => {
      kill();
      finish({ kind: 'aborted' });
    };
    options.signal.addEventListener('abort', onAbort, { once: true });
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (stdout.length < OUTPUT_CAP) stdout += chunk.slice(0, OUTPUT_CAP - stdout.length);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < OUTPUT_CAP) stderr += chunk.slice(0, OUTPUT_CAP - stderr.length);
    });
    child.on('error', (error) => finish({ kind: 'error', message: error.message }));
    child.on('close', (code, signal) => finish({ kind: 'exit', code: code ?? (signal ? 128 : 1), stdout, stderr }));
    // A hook that does not read its input must not fail the write.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input);
  });
}
