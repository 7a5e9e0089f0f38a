import { tmpdir } from 'node:os';
import type { LegionConfig } from '../config/schema';
import type { RuleSet } from '../authz/rules/rule-set';
import { secretPathPatterns } from '../authz/rules/secret-paths';
import { createShellSandbox, sandboxNotice, type ShellSandbox } from '../tools/sandbox/sandbox';
import { probeSandbox, systemProbeDeps, type ProbeDeps } from '../tools/sandbox/probe';
import { findPidsCgroups } from '../tools/sandbox/pids-cgroup';
import { DEFAULT_SECRET_PATTERNS } from '../tools/sandbox/secret-patterns';

export interface ComposedSandbox {
  readonly sandbox: ShellSandbox;
  /** What to say once at start (auto without a sandbox, on refusing, an unenforced host list). */
  readonly notice?: string;
}

/**
 * The shell sandbox of this process (docs/sandbox.md): probe bubblewrap once (not when the
 * mode is off), hide the rules' secret paths, limit processes where a pids cgroup can be made.
 */
export async function composeSandbox(options: {
  readonly config: LegionConfig;
  readonly ruleSet: RuleSet;
  readonly env: NodeJS.ProcessEnv;
  readonly home: string;
  /** Injected by tests to simulate a machine without bubblewrap. */
  readonly probeDeps?: ProbeDeps;
}): Promise<ComposedSandbox> {
  const settings = options.config.sandbox;
  // Commands are spawned with this process's environment: look for bwrap on its PATH when the given env has none.
  const probeEnv = options.env.PATH === undefined ? { ...options.env, PATH: process.env.PATH } : options.env;
  const probe = settings.mode === 'off' ? undefined : await probeSandbox(options.probeDeps ?? systemProbeDeps(probeEnv));
  const fromRules = secretPathPatterns(options.ruleSet);
  const pids = findPidsCgroups();
  const xdg = options.env.XDG_CONFIG_HOME;
  const sandbox = createShellSandbox({
    settings,
    ...(probe ? { probe } : {}),
    home: options.home,
    ...(xdg ? { xdgConfigHome: xdg } : {}),
    secretPatterns: fromRules.length > 0 ? fromRules : DEFAULT_SECRET_PATTERNS,
    ...(pids ? { pids } : {}),
    tempDir: tmpdir(),
  });
  const notice = sandboxNotice(settings, sandbox.state);
  return { sandbox, ...(notice ? { notice: notice.message } : {}) };
}
