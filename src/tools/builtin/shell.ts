import { spawn } from 'node:child_process';
import { z } from 'zod';
import type { Tool, ToolResult } from '../types';
import { HeadTailBuffer } from '../output-cap';
import { errorResult, okResult } from '../result';
import { shellEnvironment } from '../shell-env';
import { plainLaunch, type Launch, type ShellSandbox } from '../sandbox/sandbox';
import { lazySchema } from '../../storage/lazy-schema';

/** Upper bound for `timeoutMs`. */
export const SHELL_MAX_TIMEOUT_MS = 60 * 60 * 1000;
/** Between SIGTERM and SIGKILL to the process group. */
export const SHELL_KILL_GRACE_MS = 2000;
/** After bash exits, how long to wait for background processes to release the output pipes. */
export const SHELL_DRAIN_MS = 250;
const MAX_COMMAND_LENGTH = 100_000;

const schema = lazySchema(() =>
  z.strictObject({
    command: z.string().describe('A bash command line, run with the workspace root as working directory'),
    timeoutMs: z.number().int().min(1).max(SHELL_MAX_TIMEOUT_MS).optional().describe('Kill the command after this many milliseconds'),
  }),
);
type Input = z.infer<ReturnType<typeof schema>>;

// CSI / OSC escape sequences: colours and cursor moves are noise in a model's context.
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

export interface ShellToolOptions {
  /** Between SIGTERM and SIGKILL (default SHELL_KILL_GRACE_MS). */
  readonly killGraceMs?: number;
  /** Wait for the pipes after bash exits (default SHELL_DRAIN_MS). */
  readonly drainMs?: number;
  /**
   * Required, so that no caller gets an unconfined shell by leaving it out: the sandbox that
   * confines every call (docs/sandbox.md; the app's, which itself honours `sandbox: off`), or
   * `'none'`, chosen on purpose, for a plain `bash -c` confined only by its cwd (tests, benches,
   * definitions that never run).
   */
  readonly sandbox: ShellSandbox | 'none';
  /** Variable names (or `PREFIX*`) passed to commands beyond SHELL_ENV_ALLOWED: the config's `sandbox.env`. */
  readonly passEnv?: readonly string[];
  /** Where commands' variables are taken from (default process.env); only allowed names pass. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * `shell`: `bash -c command` in the workspace root, in its own process group, stdin
 * closed. stdout and stderr are interleaved into one head+tail buffer sized by the
 * context's output limit, so any amount of output costs bounded memory. On timeout or
 * abort the whole group gets SIGTERM, then SIGKILL after SHELL_KILL_GRACE_MS. A non-zero
 * exit, a signal, a timeout or an interruption is an error result carrying the output.
 * Background processes that outlive bash keep running; their output is no longer read.
 * Commands get an allow-listed environment (src/tools/shell-env.ts), sandboxed or not.
 * With a sandbox (options.sandbox, state sandboxed) bash runs under bubblewrap: writes only
 * in the workspace, secrets hidden, no network unless allowed, its own pid namespace (so
 * killing the group ends every process it started, background ones included). A failure
 * that looks caused by the sandbox gets a line saying so. With `sandbox: 'none'` the shell is
 * NOT confined (only its cwd is); rules and approvals gate it. Throws when `sandbox` is missing
 * (a caller that bypassed the type).
 */
export function createShellTool(options: ShellToolOptions): Tool<Input> {
  if (options?.sandbox === undefined) throw new Error("createShellTool: sandbox is required (a ShellSandbox, or 'none' on purpose)");
  const sandbox = options.sandbox === 'none' ? undefined : options.sandbox;
  const timing = { killGraceMs: options.killGraceMs ?? SHELL_KILL_GRACE_MS, drainMs: options.drainMs ?? SHELL_DRAIN_MS };
  const passEnv = options.passEnv ?? [];
  return {
    name: 'shell',
    description:
      'Run a bash command in the workspace root (stdin is closed). Returns the combined stdout/stderr (long output keeps ' +
      'its head and tail) and the exit code. The command is killed on timeout.',
    get schema() {
      return schema();
    },
    keyArgument: (input) => input.command,
    // Read when a call starts (the sandbox may still be probing when the tool is made).
    get sandboxed() {
      return sandbox?.state.kind === 'sandboxed';
    },
    async execute(input, context) {
      if (input.command.trim().length === 0) return errorResult('command is empty');
      if (input.command.length > MAX_COMMAND_LENGTH) {
        return errorResult(`command is too long (${input.command.length} characters; at most ${MAX_COMMAND_LENGTH})`);
      }
      if (input.command.includes('\0')) return errorResult('command contains a NUL byte');
      if (context.signal.aborted) return errorResult('shell interrupted before it started');
      // Never before the probe has answered: a call must not run unconfined because it came early.
      if (sandbox && sandbox.state.kind === 'pending') await sandbox.ready();
      if (context.signal.aborted) return errorResult('shell interrupted before it started');
      const prepared = sandbox ? sandbox.launch(input.command, context.workspaceRoot) : { ok: true as const, launch: plainLaunch(input.command) };
      if (!prepared.ok) return errorResult(prepared.error, `shell ${prepared.error.split(':')[0]}`);
      const sandboxed = sandbox?.state.kind === 'sandboxed';
      const env = shellEnvironment(options.env ?? process.env, passEnv);
      return runShell(prepared.launch, env, input.command, input.timeoutMs ?? context.limits.shellTimeoutMs, context.workspaceRoot, context.limits.toolOutputLimit, context.signal, timing, sandboxed);
    },
  };
}

function runShell(
  launch: Launch,
  env: Record<string, string>,
  command: string,
  timeoutMs: number,
  cwd: string,
  outputLimit: number,
  signal: AbortSignal,
  timing: { readonly killGraceMs: number; readonly drainMs: number },
  sandboxed: boolean,
) {
  return new Promise<ToolResult>((resolveResult) => {
    const half = Math.max(256, Math.floor((outputLimit - 200) / 2));
    const output = new HeadTailBuffer(half, half);
    const started = Date.now();
    let stopReason: 'timeout' | 'interrupted' | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let drainTimer: NodeJS.Timeout | undefined;
    let settled = false;

    // fd 3: the seccomp program; fd 4: the IPC channel of the host-filtering proxy (docs/sandbox.md).
    const stdio: ('ignore' | 'pipe' | 'ipc')[] = ['ignore', 'pipe', 'pipe'];
    if (launch.seccomp || launch.attach) stdio.push(launch.seccomp ? 'pipe' : 'ignore');
    if (launch.attach) stdio.push('ipc');
    const child = spawn(launch.file, [...launch.args], { cwd, detached: true, stdio, env });
    const detach = launch.attach?.(child);
    const stdout = child.stdout!;
    const stderr = child.stderr!;
    if (launch.seccomp) {
      const program = child.stdio[3] as NodeJS.WritableStream | null;
      program?.on('error', () => undefined); // bubblewrap failed before reading it: its error is in the output
      program?.end(launch.seccomp);
    }

    const killGroup = (sig: NodeJS.Signals): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, sig);
      } catch {
        // the group is gone already
      }
    };
    const stop = (reason: 'timeout' | 'interrupted'): void => {
      if (stopReason || settled) return;
      stopReason = reason;
      killGroup('SIGTERM');
      killTimer = setTimeout(() => killGroup('SIGKILL'), timing.killGraceMs);
    };
    const timer = setTimeout(() => stop('timeout'), timeoutMs);
    const onAbort = (): void => stop('interrupted');
    signal.addEventListener('abort', onAbort, { once: true });

    stdout.on('data', (chunk: Buffer) => output.push(chunk));
    stderr.on('data', (chunk: Buffer) => output.push(chunk));

    const finish = (spawnError?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(drainTimer);
      signal.removeEventListener('abort', onAbort);
      // After a timeout or abort, make sure stragglers die even if bash is gone.
      if (stopReason) {
        killGroup('SIGKILL');
        clearTimeout(killTimer);
      }
      stdout.destroy();
      stderr.destroy();
      detach?.();
      if (child.connected) child.disconnect();
      const reverted = launch.verify?.();
      launch.done();
      if (spawnError) {
        resolveResult(errorResult(`cannot run ${launch.file}: ${spawnError.message}`));
        return;
      }
      resolveResult(describe(command, output, exit, stopReason, timeoutMs, Date.now() - started, sandboxed ? launch : undefined, reverted));
    };

    child.on('error', (error) => finish(error));
    child.on('exit', (code, sig) => {
      exit = { code, signal: sig };
      // Output may still be in the pipes; background children may hold them open forever.
      drainTimer = setTimeout(() => finish(), stopReason ? 50 : timing.drainMs);
    });
    child.on('close', () => finish());
  });
}

function describe(
  command: string,
  output: HeadTailBuffer,
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined,
  stopReason: 'timeout' | 'interrupted' | undefined,
  timeoutMs: number,
  elapsedMs: number,
  sandbox: Launch | undefined,
  reverted: string | undefined,
): ToolResult {
  const text = output.toString().replace(ANSI, '').replace(/\s+$/, '');
  const blocked = sandbox && !stopReason && exit?.code !== 0 ? sandbox.explain(text) : undefined;
  const body = (text.length > 0 ? text : '(no output)') + (blocked ? `\n[${blocked}]` : '') + (reverted ? `\n[${reverted}]` : '');
  const firstLine = command.split('\n')[0]!.slice(0, 60);
  if (stopReason === 'timeout') {
    return errorResult(`${body}\n[timed out after ${timeoutMs} ms; the process group was killed]`, `${firstLine}: timed out after ${timeoutMs} ms`);
  }
  if (stopReason === 'interrupted') {
    return errorResult(`${body}\n[interrupted; the process group was killed]`, `${firstLine}: interrupted`);
  }
  if (exit?.signal) return errorResult(`${body}\n[killed by ${exit.signal}]`, `${firstLine}: killed by ${exit.signal}`);
  const code = exit?.code ?? -1;
  const seconds = (elapsedMs / 1000).toFixed(1);
  // What the sandbox had to undo makes the call a failure, whatever the exit code.
  if (reverted) return errorResult(`${body}\n[exit code ${code}]`, `${firstLine}: exit ${code} (blocked by the sandbox)`);
  if (code !== 0) return errorResult(`${body}\n[exit code ${code}]`, `${firstLine}: exit ${code}${blocked?.startsWith('blocked') ? ' (blocked by the sandbox)' : ''}`);
  return okResult(`${body}\n[exit code 0]`, `${firstLine}: exit 0 (${seconds} s)`);
}
