import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { inputGate, waitForScreen, waitSessionGone } from '../helpers/tmux';

/**
 * Support for the modal end-to-end tests: the built CLI (dist/legion.js) in a detached tmux
 * session, driven by keys and read back with `capture-pane`. Every session has a unique
 * name and is killed in `finally`. Waits are generous: the machine is shared.
 */
export const ROOT = resolve(import.meta.dirname, '../..');
export const CLI = join(ROOT, 'dist', 'legion.js');

export function hasTmux(): boolean {
  return spawnSync('tmux', ['-V']).status === 0;
}

let counter = 0;

export interface Tmux {
  readonly name: string;
  screen(): string;
  /** Named keys as tmux knows them (`Enter`, `Escape`, `C-y`, `Up`, `Space`) or literal text with `{ literal: true }`. */
  keys(...keys: string[]): void;
  type(text: string): void;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  waitGone(pattern: RegExp, timeoutMs?: number): Promise<string>;
  kill(): void;
}

export function startTmux(command: readonly string[], env: Readonly<Record<string, string>>, size = { columns: 140, rows: 44 }): Tmux {
  const name = `legion-modals-${process.pid}-${Date.now()}-${++counter}`;
  const envArgs = Object.entries(env).map(([k, v]) => `${k}=${shellQuote(v)}`).join(' ');
  const cmd = `env ${envArgs} ${command.map(shellQuote).join(' ')}; echo "[exited $?]"; sleep 30`;
  // A private tmux server per session: no interference with the user's tmux or other tests.
  const tmux = (...args: string[]): string[] => ['-L', name, ...args];
  execFileSync('tmux', tmux('-f', '/dev/null', 'new-session', '-d', '-s', name, '-x', String(size.columns), '-y', String(size.rows), cmd));
  const screen = (): string => {
    const r = spawnSync('tmux', tmux('capture-pane', '-p', '-t', name), { encoding: 'utf8' });
    return r.status === 0 ? r.stdout : '';
  };
  // The first key waits until the app reads its terminal (raw mode: test/helpers/tmux.ts).
  const reading = inputGate(() => execFileSync('tmux', tmux('display-message', '-p', '-t', name, '#{pane_tty}'), { encoding: 'utf8' }).trim());
  // The settled frame of test/helpers/tmux.ts (a capture may catch a frame half drawn).
  const wait = (test: (s: string) => boolean, what: string, timeoutMs: number): Promise<string> => waitForScreen(screen, test, timeoutMs, what);
  // The pane's shell and the app it runs get SIGHUP from kill-server and may still be writing
  // the run's files: wait until they and what they started are gone (SIGKILL after 10 s).
  const kill = (): void => {
    const pane = spawnSync('tmux', tmux('display-message', '-p', '-t', name, '#{pane_dead} #{pane_pid}'), { encoding: 'utf8' });
    const [dead, pid] = pane.status === 0 ? pane.stdout.trim().split(' ') : ['1', '0'];
    spawnSync('tmux', tmux('kill-server'));
    if (dead === '0' && Number(pid) > 0) waitSessionGone(Number(pid), 10_000);
  };
  return {
    name,
    screen,
    keys: (...keys) => { reading.wait(); execFileSync('tmux', tmux('send-keys', '-t', name, ...keys)); },
    type: (text) => { reading.wait(); execFileSync('tmux', tmux('send-keys', '-t', name, '-l', text)); },
    waitFor: (pattern, timeoutMs = 20_000) => wait((s) => pattern.test(s), String(pattern), timeoutMs),
    waitGone: (pattern, timeoutMs = 20_000) => wait((s) => !pattern.test(s), `${pattern} to go`, timeoutMs),
    kill,
  };
}

function shellQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * `legion init` in `dir`, then the extra agents (file tools, no approval authority). `home`: the
 * HOME Legion will run with, when not this process's: init trusts the workspace for that user
 * (docs/workspace-trust.md).
 */
export async function initWorkspace(dir: string, agents: readonly { id: string; tools: string[] }[], home?: string): Promise<void> {
  execFileSync(process.execPath, [CLI, '--cwd', dir, 'init'], { env: { ...process.env, LEGION_PROVIDER: 'faux', ...(home ? { HOME: home, XDG_CONFIG_HOME: join(home, '.config') } : {}) }, stdio: 'pipe' });
  const participants = join(dir, '.legion', 'collective', 'participants');
  await mkdir(participants, { recursive: true });
  for (const a of agents) {
    await writeFile(join(participants, `${a.id}.json`), JSON.stringify({
      version: 1, id: a.id, name: a.id, description: `${a.id} (test agent)`, status: 'active', kind: 'agent',
      systemPrompt: `You are ${a.id}.`, provider: 'default', model: 'default', tools: a.tools, toolAuthorizations: {}, approvalAuthority: [],
    }, null, 2));
  }
}

/** The command line and environment of the TUI on a faux script. */
export function legionTui(dir: string, script: string): { command: string[]; env: Record<string, string> } {
  return {
    command: [process.execPath, CLI, '--cwd', dir],
    env: { LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: script, TERM: 'xterm-256color', NO_COLOR: '1', ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '' },
  };
}

/**
 * A temp workspace for `fn`, removed afterwards. `fn` kills its tmux sessions (`kill` waits
 * until their processes are gone) before this removes the workspace.
 */
export async function withWorkspace<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'legion-modals-'));
  try {
    return await fn(dir);
  } finally {
    // Retries: a server the test stopped may still be removing its socket and lock as it exits.
    await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  }
}

/**
 * The approval queue showing `waiting` (e.g. `/Approval queue · 1 waiting for you/`), however it
 * got there. After a restart with pending requests the queue opens by itself once the requests
 * are re-offered (on an empty composer), and Ctrl+Y toggles it: pressing Ctrl+Y blindly can
 * close the queue that just opened by itself. So Ctrl+Y is pressed only while the queue is not
 * showing, and the queue must still show a moment later (a Ctrl+Y in flight would close it).
 */
export async function openApprovalQueue(t: Pick<Tmux, 'screen' | 'keys' | 'waitFor'>, waiting: RegExp): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      await t.waitFor(waiting, 3_000);
      await new Promise((r) => setTimeout(r, 400));
      const s = t.screen();
      if (waiting.test(s)) return s;
    } catch (error) {
      if (attempt >= 6) throw error;
    }
    if (!waiting.test(t.screen())) t.keys('C-y');
  }
}

/** Ctrl+C twice, then the pane says the app exited (`exited`: which exit codes count, default any). */
export async function quitTui(t: Pick<Tmux, 'keys' | 'waitFor'>, options: { exited?: RegExp; timeoutMs?: number } = {}): Promise<void> {
  t.keys('C-c');
  t.keys('C-c');
  await t.waitFor(options.exited ?? /\[exited \d+\]/, options.timeoutMs ?? 20_000);
}

/** Give a participant of the workspace more tools (its file in `.legion/collective/participants/`). */
export async function grantTools(dir: string, participantId: string, tools: readonly string[]): Promise<void> {
  const file = join(dir, '.legion', 'collective', 'participants', `${participantId}.json`);
  const participant = JSON.parse(await readFile(file, 'utf8')) as { tools: string[] };
  await writeFile(file, JSON.stringify({ ...participant, tools: [...participant.tools, ...tools] }, null, 2));
}

/** Every line of every run's `approvals.jsonl` of the workspace (requests and decisions), parsed. */
export async function approvalLines(dir: string): Promise<Record<string, unknown>[]> {
  const runs = join(dir, '.legion', 'runs');
  const out: Record<string, unknown>[] = [];
  for (const run of await readdir(runs)) {
    const file = join(runs, run, 'approvals.jsonl');
    if (!existsSync(file)) continue;
    for (const line of (await readFile(file, 'utf8')).split('\n')) if (line.trim()) out.push(JSON.parse(line) as Record<string, unknown>);
  }
  return out;
}
