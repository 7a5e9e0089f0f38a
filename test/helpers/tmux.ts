import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * A private tmux server (own socket, unique name) with one detached pane, for driving the
 * built CLI like a user. `remain-on-exit` keeps the last screen when the app exits.
 * Always `kill()` in a `finally`.
 */
export interface TmuxSession {
  /** Send keys in tmux syntax (`Enter`, `Tab`, `C-c`, `Escape`, `BTab`…). */
  keys(...keys: string[]): void;
  /** Type literal text (no key names). */
  type(text: string): void;
  capture(): string;
  /** The screen with its colours and attributes (tmux `capture-pane -e`: SGR sequences). */
  captureStyled(): string;
  /** The pid of the pane's process. */
  pid(): number;
  /** True once the pane's process has exited. */
  dead(): boolean;
  /** Start `command` again in the pane (the previous one is killed). */
  respawn(command: string): void;
  /** Poll the screen until `check` holds; throws with the last screen after `timeoutMs`. */
  waitFor(check: RegExp | ((screen: string) => boolean), timeoutMs?: number, what?: string): Promise<string>;
  kill(): void;
}

export function hasTmux(): boolean {
  return spawnSync('tmux', ['-V']).status === 0;
}

export interface TmuxOptions {
  readonly command: string;
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly width?: number;
  readonly height?: number;
}

export function startTmux(options: TmuxOptions): TmuxSession {
  const socket = `legion-e2e-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
  const run = (...args: string[]): string => {
    const r = spawnSync('tmux', ['-L', socket, ...args], { encoding: 'utf8', env: options.env, cwd: options.cwd });
    if (r.status !== 0) throw new Error(`tmux ${args[0]}: ${r.stderr.trim() || `exit ${r.status}`}`);
    return r.stdout;
  };
  run('-f', '/dev/null', 'new-session', '-d', '-s', 'e2e', '-x', String(options.width ?? 120), '-y', String(options.height ?? 40), 'sleep 86400');
  run('set-option', '-g', 'remain-on-exit', 'on');
  run('set-option', '-g', 'status', 'off');
  run('respawn-pane', '-k', '-t', 'e2e', options.command);
  let killed = false;
  const session: TmuxSession = {
    keys: (...keys) => void run('send-keys', '-t', 'e2e', ...keys),
    type: (text) => void run('send-keys', '-t', 'e2e', '-l', text),
    capture: () => run('capture-pane', '-p', '-t', 'e2e'),
    captureStyled: () => run('capture-pane', '-p', '-e', '-t', 'e2e'),
    pid: () => Number(run('display-message', '-p', '-t', 'e2e', '#{pane_pid}').trim()),
    dead: () => run('display-message', '-p', '-t', 'e2e', '#{pane_dead}').trim() === '1',
    respawn: (command) => void run('respawn-pane', '-k', '-t', 'e2e', command),
    async waitFor(check, timeoutMs = 10_000, what) {
      const ok = typeof check === 'function' ? check : (s: string) => check.test(s);
      const until = Date.now() + timeoutMs;
      let screen = '';
      // A capture can catch a frame half drawn (tmux has parsed only part of Ink's write): the
      // check may match its first lines while the rest is still blank. A matching screen is
      // returned once a second capture 40 ms later shows the same screen (a settled frame), or,
      // where the screen keeps changing (a spinner), the last matching capture after 600 ms.
      let firstMatch = 0;
      let previous: string | null = null;
      for (;;) {
        screen = session.capture();
        if (ok(screen)) {
          const now = Date.now();
          if (firstMatch === 0) firstMatch = now;
          if (screen === previous || now - firstMatch >= 600) return screen;
          previous = screen;
          await new Promise((r) => setTimeout(r, 40));
          continue;
        }
        firstMatch = 0;
        previous = null;
        if (Date.now() > until) {
          throw new Error(`timed out after ${timeoutMs} ms waiting for ${what ?? String(check)}; screen:\n${screen}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    kill() {
      if (killed) return;
      killed = true;
      // The pane's process gets SIGHUP and may still be writing its files (a run's last lines)
      // when kill-server returns: wait until it is gone, so a caller removing the workspace next
      // does not race it (rm's ENOTEMPTY). Bounded: a process that ignores SIGHUP is killed.
      let pane = 0;
      try {
        if (!session.dead()) pane = session.pid();
      } catch { /* the server is gone already */ }
      spawnSync('tmux', ['-L', socket, 'kill-server'], { env: options.env });
      if (pane > 0) waitGone(pane, 10_000);
    },
  };
  return session;
}

/** Block until `pid` has exited (SIGKILL once `timeoutMs` has passed). */
function waitGone(pid: number, timeoutMs: number): void {
  // A zombie (exited, not yet reaped by whoever inherited it) counts as gone: it writes nothing.
  const alive = (): boolean => {
    try {
      return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
    } catch {
      return false;
    }
  };
  const nap = new Int32Array(new SharedArrayBuffer(4));
  const until = Date.now() + timeoutMs;
  while (alive()) {
    if (Date.now() > until) {
      try { process.kill(pid, 'SIGKILL'); } catch { /* gone meanwhile */ }
      return;
    }
    Atomics.wait(nap, 0, 0, 20);
  }
}

/** `exec` so the pane's process is the app; arguments quoted for the shell. */
export function shellCommand(args: readonly string[]): string {
  return ['exec', ...args.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))].join(' ');
}
