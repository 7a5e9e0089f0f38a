/**
 * sandbox: what the shell sandbox adds to one `shell` call (issue 15: ≤ 30 ms median).
 * The same command (`true`) runs through the real shell tool, alternately unconfined and
 * under bubblewrap with the whole policy of docs/sandbox.md (secret scan of the workspace,
 * HOME and the directories above it, seccomp filter, pids cgroup where one can be made).
 * Each figure is a median over the samples; the overhead is the difference of the medians.
 * Figures: overheadMs (the budget), plainMs, sandboxedMs.
 */
import { mkdtempSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createShellTool } from '../../src/tools/builtin/shell';
import { executeTool } from '../../src/tools/execute-tool';
import { createShellSandbox } from '../../src/tools/sandbox/sandbox';
import { trustRegistryFile } from '../../src/storage/trust-registry';
import { userConfigDir } from '../../src/storage/private-mode';
import { probeSandbox, systemProbeDeps } from '../../src/tools/sandbox/probe';
import { findPidsCgroups } from '../../src/tools/sandbox/pids-cgroup';
import { DEFAULT_SECRET_PATTERNS } from '../../src/tools/sandbox/secret-patterns';
import type { ToolContext } from '../../src/tools/types';
import { stats, type BenchOptions } from './harness';

export async function run(options: BenchOptions): Promise<Record<string, number>> {
  const probe = await probeSandbox(systemProbeDeps());
  if (probe.kind !== 'available') {
    options.note?.(`no sandbox on this machine: ${probe.reason}`);
    return { overheadMs: NaN, plainMs: NaN, sandboxedMs: NaN };
  }
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'legion-bench-sandbox-')));
  // A workspace the size of a small project: 20 folders × 25 files, a .git folder, .legion.
  for (let d = 0; d < 20; d++) {
    mkdirSync(join(dir, 'src', `m${d}`), { recursive: true });
    for (let f = 0; f < 25; f++) writeFileSync(join(dir, 'src', `m${d}`, `f${f}.ts`), 'export {};\n');
  }
  mkdirSync(join(dir, '.git', 'hooks'), { recursive: true });
  writeFileSync(join(dir, '.git', 'config'), '');
  mkdirSync(join(dir, '.legion'));
  const pids = findPidsCgroups();
  const sandbox = createShellSandbox({
    settings: { mode: 'on', network: 'none' }, probe, home: homedir(), secretPatterns: DEFAULT_SECRET_PATTERNS,
    ...(pids ? { pids } : {}), tempDir: tmpdir(), trustedFiles: () => [], env: process.env,
    trustRegistry: trustRegistryFile(userConfigDir(process.env, homedir())),
  });
  const confined = createShellTool({ sandbox, drainMs: 50 });
  const plain = createShellTool({ drainMs: 50, sandbox: 'none' });
  const context: ToolContext = {
    workspaceRoot: dir, runId: 'bench', sessionId: 'bench', participantId: 'bench', chain: ['bench'], toolUseId: 'tu',
    signal: new AbortController().signal, limits: { shellTimeoutMs: 30_000, toolOutputLimit: 30_000 },
    askUser: async () => ({ content: 'no user in a bench', isError: true }),
  };
  const samples = options.smoke ? 3 : 30;
  const plainMs: number[] = [];
  const sandboxedMs: number[] = [];
  try {
    const time = async (tool: typeof plain, into: number[]) => {
      const start = performance.now();
      const result = await executeTool(tool, { command: 'true' }, context);
      if (result.isError) throw new Error(`shell failed in the bench: ${result.content}`);
      into.push(performance.now() - start);
    };
    await time(plain, []);
    await time(confined, []);
    for (let i = 0; i < samples; i++) {
      await time(plain, plainMs);
      await time(confined, sandboxedMs);
    }
  } finally {
    sandbox.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
  const p = stats(plainMs).median;
  const s = stats(sandboxedMs).median;
  options.note?.(`pids cgroup: ${pids ? 'yes' : 'no'}; samples: ${samples} each`);
  return { overheadMs: s - p, plainMs: p, sandboxedMs: s };
}
