import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

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
  /**
   * Start `command` again in the pane. A previous one still running is hung up (SIGHUP) first,
   * and the new one starts once it and what it started are gone (SIGKILL after 10 s).
   */
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
  const reading = inputGate(() => run('display-message', '-p', '-t', 'e2e', '#{pane_tty}').trim());
  const session: TmuxSession = {
    keys: (...keys) => { reading.wait(); run('send-keys', '-t', 'e2e', ...keys); },
    type: (text) => { reading.wait(); run('send-keys', '-t', 'e2e', '-l', text); },
    capture: () => run('capture-pane', '-p', '-t', 'e2e'),
    captureStyled: () => run('capture-pane', '-p', '-e', '-t', 'e2e'),
    pid: () => Number(run('display-message', '-p', '-t', 'e2e', '#{pane_pid}').trim()),
    dead: () => run('display-message', '-p', '-t', 'e2e', '#{pane_dead}').trim() === '1',
    respawn(command) {
      // A live app is hung up (SIGHUP to its process group, as a closed terminal does) and waited
      // for before the new one starts: a start beside an app still closing (under load, writing
      // its code cache first) finds the run still locked and ends ("run … is in use").
      let previous = 0;
      try {
        if (!session.dead()) previous = session.pid();
      } catch { /* respawn below says what is wrong */ }
      if (previous > 0) {
        try { process.kill(-previous, 'SIGHUP'); } catch { /* gone meanwhile */ }
        waitSessionGone(previous, 10_000);
      }
      run('respawn-pane', '-k', '-t', 'e2e', command);
      reading.reset();
    },
    waitFor: (check, timeoutMs = 10_000, what) => waitForScreen(session.capture, check, timeoutMs, what),
    kill() {
      if (killed) return;
      killed = true;
      // The pane's process gets SIGHUP and may still be writing its files (a run's last lines)
      // when kill-server returns: wait until it and what it started are gone, so a caller
      // removing the workspace next does not race them (rm's ENOTEMPTY) and nothing is left
      // behind. Bounded: processes that ignore SIGHUP are killed.
      let pane = 0;
      try {
        if (!session.dead()) pane = session.pid();
      } catch { /* the server is gone already */ }
      spawnSync('tmux', ['-L', socket, 'kill-server'], { env: options.env });
      if (pane > 0) waitSessionGone(pane, 10_000);
    },
  };
  return session;
}

/**
 * Keys sent before the app reads its terminal are lost to it: the terminal is still in canonical
 * mode (echo on, Enter turned into a line feed, held until a whole line). The app's first frame
 * can be on screen a moment before it switches to raw mode (Ink does so in an effect after the
 * first commit), and a loaded machine can stretch that moment. So the first key sent to a start
 * waits until its terminal is in raw mode (`stty -a` of the pane's tty: `-icanon`); later keys go
 * at once (the app leaves raw mode as it exits, when keys like a second Ctrl+C may still come).
 * Bounded: an app that never reads its terminal gets the keys after 15 s.
 */
export function inputGate(ttyOf: () => string): { wait(): void; reset(): void } {
  let open = false;
  const nap = new Int32Array(new SharedArrayBuffer(4));
  return {
    wait() {
      if (open) return;
      const until = Date.now() + 15_000;
      let tty = '';
      while (Date.now() < until) {
        try {
          tty ||= ttyOf();
        } catch { /* the pane is being made */ }
        const mode = tty ? spawnSync('stty', ['-F', tty, '-a'], { encoding: 'utf8' }) : null;
        if (mode?.status === 0 && /(^|\s)-icanon(\s|$)/.test(mode.stdout)) break;
        Atomics.wait(nap, 0, 0, 20);
      }
      open = true;
    },
    reset() {
      open = false;
    },
  };
}

/**
 * Poll `capture` until `check` holds; throws with the last screen after `timeoutMs`.
 *
 * A capture can catch a frame half drawn (tmux has parsed only part of Ink's write): the check
 * may match its first lines while the rest is still blank. So a matching screen is returned once
 * a second capture 40 ms later shows the same screen (a settled frame); where the screen keeps
 * changing but keeps matching (a spinner), the last matching capture after 600 ms; where the
 * next capture no longer matches (the state was brief: a modal opened over it), the matching
 * capture: the state was seen, which is what the caller waited for.
 */
export async function waitForScreen(
  capture: () => string,
  check: RegExp | ((screen: string) => boolean),
  timeoutMs: number,
  what?: string,
): Promise<string> {
  const ok = typeof check === 'function' ? check : (s: string) => check.test(s);
  const until = Date.now() + timeoutMs;
  let firstMatch = 0;
  let matched: string | null = null;
  for (;;) {
    const screen = capture();
    if (ok(screen)) {
      const now = Date.now();
      if (firstMatch === 0) firstMatch = now;
      if (screen === matched || now - firstMatch >= 600) return screen;
      matched = screen;
      await new Promise((r) => setTimeout(r, 40));
      continue;
    }
    if (matched !== null) return matched;
    if (Date.now() > until) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what ?? String(check)}; screen:\n${screen}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Block until every process of the session `sid` (a pane's process is a session leader: tmux
 * starts it with setsid, and what it starts stays in its session unless it detaches) has exited;
 * SIGKILL those left once `timeoutMs` has passed. A zombie (exited, not yet reaped by whoever
 * inherited it) counts as gone: it writes nothing.
 */
export function waitSessionGone(sid: number, timeoutMs: number): void {
  const nap = new Int32Array(new SharedArrayBuffer(4));
  const until = Date.now() + timeoutMs;
  for (;;) {
    // The leader first (one file), then the scan of /proc for what it left in its session.
    const left = leaderAlive(sid) ? [sid] : sessionMembers(sid);
    if (left.length === 0) return;
    if (Date.now() > until) {
      for (const pid of sessionMembers(sid)) {
        try { process.kill(pid, 'SIGKILL'); } catch { /* gone meanwhile */ }
      }
      return;
    }
    Atomics.wait(nap, 0, 0, 20);
  }
}

/** Whether `pid` is running (not gone, not a zombie). */
function leaderAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The live (not zombie) processes of session `sid`, from /proc. */
function sessionMembers(sid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid pgrp session …: comm may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] !== 'Z' && Number(fields[3]) === sid) out.push(Number(name));
  }
  return out;
}

/** `exec` so the pane's process is the app; arguments quoted for the shell. */
export function shellCommand(args: readonly string[]): string {
  return ['exec', ...args.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))].join(' ');
}
