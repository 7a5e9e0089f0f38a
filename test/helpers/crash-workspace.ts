import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { testUserDir } from './trust';
import { existsSync, mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { build } from 'esbuild';
import { initWorkspace } from '../../src/collective/init';
import { createParticipantStore } from '../../src/collective/store';
import { agentSchema } from '../../src/collective/participant';
import { layoutFor } from '../../src/storage/layout';
import type { CommandContext } from '../../src/cli/command';

/**
 * The crash-safety workspace and what the suite checks on disk after each SIGKILL
 * (see crash-driver.ts for the child, test/integration/reliability/crash.test.ts for the loop).
 */
export const APP_DIR = join(import.meta.dirname, '..', '..');

/** Agents the driver talks to (lanes: w1 default + side, w2, w3). */
export const CRASH_LANES = [
  { agent: 'w1', name: 'default' },
  { agent: 'w2', name: 'default' },
  { agent: 'w3', name: 'default' },
  { agent: 'w1', name: 'side' },
] as const;

export const CRASH_SCRIPT = `version: 1
defaults: { chunkSize: 7, delayMs: 2 }
replies:
  # Summaries (a small window makes sessions compact often, so kills land mid-compaction too; docs/context.md).
  - { purpose: compaction, repeat: true, delayMs: 20, text: "SUMMARY: the worker wrote and read its files." }
  - on: message
    repeat: true
    text: "Working on {{lastText}}. Let me look at the files first, then write the result down."
    toolCalls:
      - { name: file_write, input: { path: "out/{{agent}}.md", content: "# {{agent}}\\n{{lastText}}\\n${'padding line for a bigger record. '.repeat(60)}\\n" } }
      - { name: file_read, input: { path: "seed.txt" } }
      - { name: file_read, input: { path: "out/{{agent}}.md" } }
      - { name: todo_write, input: { todos: [{ id: "a", content: "{{lastText}}", status: in_progress }] } }
  - on: tool-error
    repeat: true
    text: "Some calls failed; summing up what I have."
  - { on: tool-result, when: "modified w", repeat: true, text: "Done: {{firstText}}." }
  - on: tool-result
    repeat: true
    text: "Read it. One more pass."
    toolCalls:
      - { name: modify_agent, input: { id: "{{agent}}", description: "last pass {{firstText}}" } }
      - { name: file_read, input: { path: "seed.txt" } }
`;

/** A workspace with three worker agents, the crash script and a small turn budget. */
export async function setupCrashWorkspace(dir: string): Promise<void> {
  await initWorkspace({ appDir: APP_DIR, workspaceRoot: dir, userDir: testUserDir(dir) });
  const store = createParticipantStore(layoutFor(dir));
  for (const id of ['w1', 'w2', 'w3']) {
    await store.save(agentSchema().parse({
      id, kind: 'agent', name: id, systemPrompt: `You are ${id}, a worker.`,
      tools: ['file_write', 'file_read', 'todo_write', 'modify_agent'],
    }));
  }
  await writeFile(join(dir, '.legion', 'config.yaml'), 'runtime:\n  maxIterations: 3\ncontext:\n  defaultWindow: 6000\n  evictToolResultsOver: 500\n');
  await writeFile(join(dir, '.legion', 'crash-script.yaml'), CRASH_SCRIPT);
  await mkdir(join(dir, 'out'), { recursive: true });
  await writeFile(join(dir, 'seed.txt'), 'seed line one\nseed line two\n');
}

/**
 * Bundle crash-driver.ts once (dependencies stay external, resolved from the repository's
 * node_modules), so each child starts in a fraction of the time `--import tsx` takes.
 */
export async function buildCrashDriver(): Promise<string> {
  const dir = join(APP_DIR, 'node_modules', '.cache', 'legion-reliability');
  mkdirSync(dir, { recursive: true });
  const outfile = join(dir, `crash-driver-${process.pid}.mjs`);
  await build({
    entryPoints: [join(APP_DIR, 'test', 'helpers', 'crash-driver.ts')],
    outfile, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'warning',
  });
  return outfile;
}

export interface DriverChild {
  readonly child: ChildProcess;
  /** Resolves with the run id once the child printed `ready`, or null if it exited first. */
  readonly ready: Promise<string | null>;
  readonly exited: Promise<number | null>;
  stderr(): string;
  turns(): number;
  /** Per session, the last acknowledged turn: the history length then and its last message. */
  acknowledged(): ReadonlyMap<string, { readonly count: number; readonly last: unknown }>;
}

export function startDriver(driver: string, workspace: string, seed: number): DriverChild {
  const child = spawn(process.execPath, [driver, workspace, APP_DIR, String(seed)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  let turns = 0;
  const acks = new Map<string, { count: number; last: unknown }>();
  let resolveReady!: (v: string | null) => void;
  const ready = new Promise<string | null>((r) => (resolveReady = r));
  child.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    const m = /^ready (\S+)$/m.exec(out);
    if (m) resolveReady(m[1]!);
    turns = (out.match(/^turn /gm) ?? []).length;
    for (const m of out.matchAll(/^turn \d+ (\S+) (\d+) (.*)\n/gm)) acks.set(m[1]!, { count: Number(m[2]), last: JSON.parse(m[3]!) });
  });
  child.stderr!.on('data', (d: Buffer) => void (err += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => {
    resolveReady(null);
    r(code);
  }));
  return { child, ready, exited, stderr: () => err, turns: () => turns, acknowledged: () => acks };
}

/** Every file under `dir`, relative paths, sorted. */
export async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (at: string): Promise<void> => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) await walk(path);
      else out.push(relative(dir, path));
    }
  };
  if (existsSync(dir)) await walk(dir);
  return out.sort();
}

export interface JsonlLines {
  /** Lines that parse, in order. */
  readonly complete: string[];
  /** 1-based numbers of lines that do not parse. */
  readonly broken: number[];
  /** The file does not end with a newline. */
  readonly unterminated: boolean;
}

export function jsonlLines(text: string): JsonlLines {
  const lines = text.split('\n');
  const unterminated = text.length > 0 && !text.endsWith('\n');
  if (!unterminated) lines.pop();
  const complete: string[] = [];
  const broken: number[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      JSON.parse(line);
      complete.push(line);
    } catch {
      broken.push(i + 1);
    }
  });
  return { complete, broken, unterminated };
}

export async function readJsonlLines(path: string): Promise<JsonlLines> {
  return jsonlLines(await readFile(path, 'utf8'));
}

/** A `CommandContext` for `composeApp` on `workspace` (no flags; output captured in `out`). */
export function appContext(workspace: string, env: Record<string, string>, out: string[] = []): CommandContext {
  return {
    args: { command: 'start', positionals: [], flags: new Map(), global: { help: false, version: false, plain: false } },
    io: { stdout: (t) => void out.push(t), stderr: (t) => void out.push(t), env: { HOME: workspace, ...env }, cwd: workspace, isTTY: false },
    appDir: APP_DIR,
    workspaceRoot: workspace,
  };
}
