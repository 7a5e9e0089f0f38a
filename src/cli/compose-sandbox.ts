import { tmpdir } from 'node:os';
import type { LegionConfig } from '../config/schema';
import type { RuleSet } from '../authz/rules/rule-set';
import { secretPathPatterns } from '../authz/rules/secret-paths';
import { createShellSandbox } from '../tools/sandbox/sandbox';
import { deferredSandbox, type DeferredSandbox } from '../tools/sandbox/deferred';
import { probeSandbox, systemProbeDeps, type ProbeDeps } from '../tools/sandbox/probe';
import { findPidsCgroups } from '../tools/sandbox/pids-cgroup';
import { DEFAULT_SECRET_PATTERNS } from '../tools/sandbox/secret-patterns';
import { hostPath } from '../tools/host-path';
import { userConfigDir } from '../storage/private-mode';
import { trustRegistryFile } from '../storage/trust-registry';

/**
 * The shell sandbox of this process (docs/sandbox.md): bubblewrap is probed once, when
 * `start()` is first called (after the first frame, or by the first turn, which waits for it;
 * never when the mode is off); the rules' secret paths, the usual credentials, `.legion/`,
 * `$XDG_RUNTIME_DIR` and `sandbox.hide` are hidden; processes are limited where
 * a pids cgroup can be made. `start()` resolves to what to say once about the outcome.
 */
export function composeSandbox(options: {
  readonly config: LegionConfig;
  readonly ruleSet: RuleSet;
  readonly env: NodeJS.ProcessEnv;
  readonly home: string;
  /** The workspace root: bubblewrap is never looked for in its folders (a sandboxed command may write there, host-path.ts). */
  readonly workspaceRoot: string;
  /** The files trusted hooks and MCP servers run or are defined in, asked per call (trusted-run-files.ts). */
  readonly trustedFiles: () => readonly string[];
  /** Injected by tests to simulate a machine without bubblewrap, or a slow probe. */
  readonly probeDeps?: ProbeDeps;
}): DeferredSandbox {
  const settings = options.config.sandbox;
  // Commands are spawned with this process's environment: look for bwrap on its PATH when the given env has none,
  // never in a folder of the workspace (a planted `bwrap` would be the sandbox of every later command).
  const probeEnv = { ...options.env, PATH: hostPath(options.env.PATH ?? process.env.PATH ?? '', options.workspaceRoot) };
  return deferredSandbox({
    settings,
    probe: () => probeSandbox(options.probeDeps ?? systemProbeDeps(probeEnv)),
    make: (probe) => {
      const pids = findPidsCgroups();
      const xdg = options.env.XDG_CONFIG_HOME;
      const runtimeDir = options.env.XDG_RUNTIME_DIR;
      return createShellSandbox({
        settings,
        ...(probe ? { probe } : {}),
        home: options.home,
        ...(xdg ? { xdgConfigHome: xdg } : {}),
        ...(runtimeDir ? { runtimeDir } : {}),
        secretPatterns: secretPatternsOf(options.ruleSet),
        ...(pids ? { pids } : {}),
        tempDir: tmpdir(),
        trustedFiles: options.trustedFiles,
        env: options.env,
        trustRegistry: trustRegistryFile(userConfigDir(options.env, options.home)),
      });
    },
  });
}

/** The secret paths of the rules (their `file_read` denies for everyone), or the usual ones when they name none: hidden in the sandbox, left out of worktree snapshots. */
export function secretPatternsOf(ruleSet: RuleSet): readonly string[] {
  const fromRules = secretPathPatterns(ruleSet);
  return fromRules.length > 0 ? fromRules : DEFAULT_SECRET_PATTERNS;
}
