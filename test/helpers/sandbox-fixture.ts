import { mkdir, mkdtemp, realpath, rm, writeFile, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { createShellSandbox, type SandboxSettings, type ShellSandbox, type ShellSandboxOptions } from '../../src/tools/sandbox/sandbox';
import { probeSandbox, systemProbeDeps, type SandboxProbe } from '../../src/tools/sandbox/probe';
import { findPidsCgroups } from '../../src/tools/sandbox/pids-cgroup';
import { DEFAULT_SECRET_PATTERNS } from '../../src/tools/sandbox/secret-patterns';
import { trustRegistryFile } from '../../src/storage/trust-registry';
import { afterEach, beforeEach } from 'node:test';
import { createShellTool } from '../../src/tools/builtin/shell';
import { executeTool } from '../../src/tools/execute-tool';
import { workspaceHooksPaths } from '../../src/tools/sandbox/git-guard';
import type { ToolResult } from '../../src/tools/types';
import { makeToolContext } from './tool-context';

/**
 * A machine layout for sandbox tests, OUTSIDE /tmp (the sandbox gives commands a private
 * /tmp, so secrets under the host's /tmp would be hidden for the wrong reason):
 *   base/ws            the workspace (a git repo, .legion/ inside)
 *   base/.env          a secret next to the workspace
 *   base/outside/      a sentinel file, the target of ws/link
 *   base/home/.ssh/id_rsa, base/home/proj/.env   the fake HOME's secrets
 */
export interface SandboxFixture {
  readonly base: string;
  readonly ws: string;
  readonly outside: string;
  readonly home: string;
  cleanup(): Promise<void>;
}

export async function makeSandboxFixture(): Promise<SandboxFixture> {
  let parent = '/var/tmp';
  try {
    await mkdir(parent, { recursive: true });
  } catch {
    parent = tmpdir();
  }
  const base = await realpath(await mkdtemp(join(parent, 'legion-sandbox-test-')));
  const ws = join(base, 'ws');
  const outside = join(base, 'outside');
  const home = join(base, 'home');
  await mkdir(join(ws, '.legion'), { recursive: true });
  await writeFile(join(ws, '.legion', 'state.json'), '{}\n');
  await mkdir(outside);
  await writeFile(join(outside, 'sentinel.txt'), 'outside\n');
  await writeFile(join(base, '.env'), 'TOKEN=outside-env-secret\n');
  await mkdir(join(home, '.ssh'), { recursive: true });
  await writeFile(join(home, '.ssh', 'id_rsa'), 'PRIVATE-KEY-MATERIAL\n');
  await mkdir(join(home, 'proj'), { recursive: true });
  await writeFile(join(home, 'proj', '.env'), 'TOKEN=home-proj-secret\n');
  await writeFile(join(ws, 'README.md'), 'hello\n');
  await writeFile(join(ws, '.env'), 'TOKEN=workspace-secret\n');
  await symlink(outside, join(ws, 'link'));
  execFileSync('git', ['init', '-q', ws]);
  return { base, ws, outside, home, cleanup: () => rm(base, { recursive: true, force: true }) };
}

let probed: Promise<SandboxProbe> | undefined;
/** The real machine's probe, once per test file. */
export function realProbe(): Promise<SandboxProbe> {
  probed ??= probeSandbox(systemProbeDeps());
  return probed;
}

export function realSandbox(
  fixture: SandboxFixture,
  probe: SandboxProbe,
  settings: Partial<SandboxSettings> = {},
  maxProcesses?: number,
  more: Partial<ShellSandboxOptions> = {},
): ShellSandbox {
  const pids = findPidsCgroups();
  return createShellSandbox({
    settings: { mode: 'on', network: 'none', ...settings },
    probe,
    home: fixture.home,
    secretPatterns: DEFAULT_SECRET_PATTERNS,
    ...(pids ? { pids } : {}),
    ...(maxProcesses !== undefined ? { maxProcesses } : {}),
    tempDir: tmpdir(), trustedFiles: () => [],
    // Live: a test that points HOME at a fake home for one call sees the guard follow it.
    env: process.env,
    // The fixture's user: `trustWorkspace(dir, fixtureEnv(fixture))` registers here.
    trustRegistry: trustRegistryFile(join(fixture.home, '.config', 'legion')),
    ...more,
  });
}

/** The environment whose user owns the fixture's trust key and registry (its HOME): for `trustWorkspace`. */
export function fixtureEnv(fixture: SandboxFixture): Record<string, string> {
  return { HOME: fixture.home };
}

/** A commit author for tests' own git (no user config is assumed). */
export const GIT_IDENTITY: readonly string[] = ['-c', 'user.name=Test', '-c', 'user.email=test@example.com'];

/** git in `cwd` as the user on the host runs it (unsandboxed: the one a planted hook would run in), without the system config. */
export function hostGit(cwd: string, ...args: string[]): string {
  return execFileSync('git', [...GIT_IDENTITY, ...args], { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' } });
}

/**
 * The scene of the hook-planting attacks (tests named hostile-husky9, hostile-linked-hooks,
 * hostile-hook-managers): before each test of the file that calls this, a fresh fixture whose
 * repository has its first commit, then `plant(fx)` (what a hook manager or the project
 * installed), then a real sandbox over it; after each, both removed. `pwned` is a file outside
 * the workspace that planted code would create; `run` is the shell tool through the sandbox;
 * `guarded` is git-guard's list of guarded paths for the fixture's user.
 */
export interface HookAttackScene {
  readonly fx: SandboxFixture;
  readonly pwned: string;
  run(command: string): Promise<ToolResult>;
  guarded(): string[];
}

export function hookAttackScene(probe: SandboxProbe, plant: (fx: SandboxFixture) => void): HookAttackScene {
  let fx: SandboxFixture | undefined;
  let sandbox: ShellSandbox | undefined;
  beforeEach(async () => {
    fx = await makeSandboxFixture();
    hostGit(fx.ws, 'add', 'README.md');
    hostGit(fx.ws, 'commit', '-qm', 'init');
    plant(fx);
    sandbox = realSandbox(fx, probe);
  });
  afterEach(async () => {
    sandbox?.dispose();
    await fx?.cleanup();
    sandbox = undefined;
    fx = undefined;
  });
  const current = (): SandboxFixture => {
    if (!fx) throw new Error('hookAttackScene: used outside a test');
    return fx;
  };
  return {
    get fx() { return current(); },
    get pwned() { return join(current().outside, 'PWNED'); },
    run: (command) => {
      if (!sandbox) throw new Error('hookAttackScene: used outside a test');
      return executeTool(createShellTool({ killGraceMs: 300, drainMs: 2_000, sandbox }), { command }, makeToolContext(current().ws));
    },
    guarded: () => workspaceHooksPaths(current().ws, { HOME: current().home, GIT_CONFIG_GLOBAL: join(current().home, 'gitconfig') }),
  };
}
