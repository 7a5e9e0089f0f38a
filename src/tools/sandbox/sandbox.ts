import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bwrapArgs } from './policy';
import { explainBlocked } from './blocked';
import { createSecretFinder, isInside, type SecretScanLimits } from './secrets';
import { enclosingLegionPaths, hiddenPaths } from './hidden-paths';
import { describeGitRestore, gitMounts, restoreGit, snapshotGit, watchGit, workspaceHooksPaths, type GitSnapshot } from './git-guard';
import { seccompFilter } from './seccomp';
import { trustedFileMounts } from './trusted-mounts';
import { knownLegion } from './known-legion';
import type { SandboxProbe } from './probe';
import type { PidsCgroups } from './pids-cgroup';
import { SANDBOX_MAX_PROCESSES } from './pids-cgroup';
import { RELAY_SOURCE, serveRelayedConnections, systemHostProxyDeps, type HostProxyDeps } from './host-proxy';
import type { ChildProcess } from 'node:child_process';

export type SandboxMode = 'auto' | 'on' | 'off';
export type SandboxNetwork = 'none' | 'all' | readonly string[];

/** The `sandbox` config block (docs/sandbox.md). */
export interface SandboxSettings {
  readonly mode: SandboxMode;
  readonly network: SandboxNetwork;
  /** More paths to hide (config `sandbox.hide`): absolute, `~/…`, or relative to the workspace. */
  readonly hide?: readonly string[];
}

/** How shell calls run in this process: decided once, by the probe (`pending` until it answers). */
export type SandboxState =
  | { readonly kind: 'pending' }
  | { readonly kind: 'sandboxed' }
  | { readonly kind: 'unsandboxed'; readonly reason: string }
  | { readonly kind: 'refused'; readonly reason: string };

/** One prepared process launch. */
export interface Launch {
  readonly file: string;
  readonly args: readonly string[];
  /** A seccomp program to write to the child's fd 3 (bubblewrap's `--seccomp 3`). */
  readonly seccomp?: Buffer;
  /** When set, the child gets a Node IPC channel (fd 4) and this is called with it once spawned;
   *  it returns what to call when the process has ended (the host-filtering proxy). */
  readonly attach?: (child: ChildProcess) => () => void;
  /** The line to append to a failed command's result when the sandbox likely caused the failure. */
  explain(output: string): string | undefined;
  /**
   * After the process ended (before `done`): undo what the command changed of git's executable
   * configuration; the "blocked by the sandbox" line to report, or undefined when nothing changed.
   */
  verify?(): string | undefined;
  /** Release what the launch holds (its process-limit cgroup); call after the process ended. */
  done(): void;
}

export interface ShellSandbox {
  readonly state: SandboxState;
  /** Settles once `state` is no longer `pending` (probes first if nobody asked yet); callers await it before `launch`. */
  ready(): Promise<void>;
  /** Prepare `bash -c command` in `workspaceRoot`, confined when `state` is sandboxed; refused while `pending`. */
  launch(command: string, workspaceRoot: string): { ok: true; launch: Launch } | { ok: false; error: string };
  /** Remove the placeholders made for hidden paths (at shutdown). */
  dispose(): void;
}

export interface ShellSandboxOptions {
  readonly settings: SandboxSettings;
  /** What `probeSandbox` found; not needed when the mode is off. */
  readonly probe?: SandboxProbe;
  readonly home: string;
  readonly xdgConfigHome?: string;
  /** `$XDG_RUNTIME_DIR`, hidden as a whole (session sockets; Legion's serve socket may be there). */
  readonly runtimeDir?: string;
  /** The rules' secret path globs (hidden from commands); see src/authz/rules/secret-paths.ts. */
  readonly secretPatterns: readonly string[];
  /** Where per-call process-limit cgroups are made; undefined: no process limit. */
  readonly pids?: PidsCgroups;
  /** Directory for the mode-000 placeholders (default: the system temp dir). */
  readonly tempDir: string;
  /** Processes one call may have at once, when `pids` can limit them (default SANDBOX_MAX_PROCESSES). */
  readonly maxProcesses?: number;
  /** The seccomp program (default: `seccompFilter()` for this CPU). */
  readonly seccomp?: Buffer;
  /**
   * The files trusted hooks and MCP servers run or are defined in (absolute; src/cli/trusted-run-files.ts),
   * asked on every call and bound read-only (docs/sandbox.md#trusted-files). Required: a sandbox
   * that forgot them would let a command rewrite what later runs unsandboxed.
   */
  readonly trustedFiles: () => readonly string[];
  /**
   * The environment of the user's git (HOME, XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM,
   * PATH): the git guard protects the config files it names (src/tools/sandbox/git-guard.ts).
   */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Bounds of the secret scans (default: SECRET_SCAN_LIMIT entries; src/tools/sandbox/secrets.ts). */
  readonly scanLimits?: SecretScanLimits;
  /**
   * The user's trust registry (storage/trust-registry.ts: `trustRegistryFile` of the user's config
   * folder). Required: every `.legion/` Legion honours is hidden and pinned from it, and one found
   * moved is revoked (known-legion.ts); a sandbox without it would leave nested workspaces writable.
   */
  readonly trustRegistry: string;
  /** How the host-list proxy resolves, checks and connects (default: this machine's; tests inject a resolver). */
  readonly hostProxy?: HostProxyDeps;
}

/** A plain `bash -c`, as shell ran before there was a sandbox. */
export function plainLaunch(command: string): Launch {
  return { file: 'bash', args: ['-c', command], explain: () => undefined, done: () => undefined };
}

/** The state for a mode and what the probe found. */
export function sandboxState(settings: SandboxSettings, probe: SandboxProbe | undefined): SandboxState {
  if (settings.mode === 'off') return { kind: 'unsandboxed', reason: 'sandbox: off in the config' };
  if (probe?.kind === 'available') return { kind: 'sandboxed' };
  const reason = probe?.kind === 'unavailable' ? probe.reason : 'the sandbox was not probed';
  return settings.mode === 'on' ? { kind: 'refused', reason } : { kind: 'unsandboxed', reason };
}

/** What the start-up notice says about the sandbox, or undefined when there is nothing to say. */
export function sandboxNotice(settings: SandboxSettings, state: SandboxState): { level: 'info' | 'warn' | 'error'; message: string } | undefined {
  if (state.kind === 'unsandboxed' && settings.mode === 'auto') {
    return { level: 'warn', message: `shell commands run WITHOUT a sandbox: ${state.reason} (sandbox: auto; see docs/sandbox.md)` };
  }
  if (state.kind === 'refused') {
    return { level: 'error', message: `sandbox: on, but no sandbox can be made (${state.reason}): every shell call will be refused` };
  }
  return undefined;
}

export function createShellSandbox(options: ShellSandboxOptions): ShellSandbox {
  const state = sandboxState(options.settings, options.probe);
  const network = options.settings.network === 'all' ? 'all' : 'none';
  const hosts = Array.isArray(options.settings.network) ? (options.settings.network as readonly string[]) : undefined;
  const seccomp = options.seccomp ?? seccompFilter();
  const secretFinder = createSecretFinder(options.secretPatterns, options.scanLimits);
  const known = knownLegion(options.trustRegistry);
  let placeholders: { dir: string; emptyDir: string; emptyFile: string } | undefined;
  let counter = 0;
  const maxProcesses = options.maxProcesses ?? SANDBOX_MAX_PROCESSES;

  const ensurePlaceholders = () => {
    if (placeholders) return placeholders;
    const dir = mkdtempSync(join(options.tempDir, 'legion-sandbox-'));
    const emptyDir = join(dir, 'hidden-dir');
    const emptyFile = join(dir, 'hidden-file');
    mkdirSync(emptyDir);
    writeFileSync(emptyFile, '');
    chmodSync(emptyDir, 0o000);
    chmodSync(emptyFile, 0o000);
    placeholders = { dir, emptyDir, emptyFile };
    return placeholders;
  };

  return {
    state,
    ready: () => Promise.resolve(),
    launch(command, workspaceRoot) {
      if (state.kind === 'pending') return { ok: false, error: 'the sandbox is not ready yet; nothing was run' };
      if (state.kind === 'refused') {
        return { ok: false, error: `refused: sandbox is on, but no sandbox can be made here (${state.reason}); nothing was run` };
      }
      if (state.kind === 'unsandboxed' || options.probe?.kind !== 'available') return { ok: true, launch: plainLaunch(command) };
      let root: string;
      let held: ReturnType<typeof ensurePlaceholders>;
      let legion: string;
      let git: ReturnType<typeof gitMounts>;
      let hooksPaths: string[];
      let trusted: ReturnType<typeof trustedFileMounts>;
      try {
        root = realpathSync(workspaceRoot);
        held = ensurePlaceholders();
        legion = legionDir(root);
        hooksPaths = workspaceHooksPaths(root, options.env);
        git = gitMounts(root, hooksPaths);
        trusted = trustedFileMounts(root, options.trustedFiles());
      } catch (error) {
        return { ok: false, error: `the sandbox could not be prepared: ${(error as Error).message}` };
      }
      const secrets = secretFinder.find({ workspaceRoot: root, home: options.home });
      let gitBefore: GitSnapshot;
      try {
        gitBefore = snapshotGit(root, options.env, secrets.nestedGit, undefined, hooksPaths);
      } catch (error) {
        return { ok: false, error: `the sandbox could not be prepared: ${(error as Error).message}` };
      }
      const fixed = hiddenPaths({
        home: options.home,
        ...(options.xdgConfigHome ? { xdgConfigHome: options.xdgConfigHome } : {}),
        ...(options.runtimeDir ? { runtimeDir: options.runtimeDir } : {}),
        workspaceRoot: root,
        extra: options.settings.hide ?? [],
      });
      const enclosing = enclosingLegionPaths(root);
      // Every registered `.legion/`: hidden, its parents in the workspace pinned; one not in place is revoked first.
      // From here the call is recorded in flight: every way out of `launch` releases it (`verify` after the call).
      const registered = known.before(root);
      if (!registered.ok) return { ok: false, error: registered.error };
      const legionPlan = registered.plan;
      const args = bwrapArgs({
        workspaceRoot: root,
        pinned: pinnedOrder([...git.writable, ...trusted.pinned, ...legionPlan.pinned], [...git.readOnly, ...trusted.readOnly]),
        readOnly: [...git.readOnly, ...trusted.readOnly],
        hiddenDirs: [...(isDirectory(legion) ? [legion] : []), ...enclosing.dirs, ...fixed.dirs, ...secrets.dirs, ...legionPlan.hiddenDirs],
        hiddenFiles: [...(isDirectory(legion) ? [] : [legion]), ...enclosing.files, ...fixed.files, ...secrets.files],
        emptyDir: held.emptyDir,
        emptyFile: held.emptyFile,
        network,
        // The seccomp filter refuses new user namespaces already; bubblewrap's own refusal costs a
        // namespace more per call, so it is only used where there is no filter (an unknown CPU).
        disableUserns: options.probe.disableUserns && !seccomp,
        ...(seccomp ? { seccompFd: 3 } : {}),
      });
      // Released on every way out from here (after the call: `verify`).
      const unprepared = (error: unknown) => {
        legionPlan.release();
        return { ok: false as const, error: `the sandbox could not be prepared: ${(error as Error).message}` };
      };
      let gitWatch: ReturnType<typeof watchGit>;
      try {
        gitWatch = watchGit(root);
      } catch (error) {
        return unprepared(error);
      }
      let cgroup: ReturnType<NonNullable<typeof options.pids>['create']> | undefined;
      try {
        cgroup = options.pids?.create(`legion-${process.pid}-${++counter}`, maxProcesses);
      } catch (error) {
        gitWatch.stop();
        return unprepared(error);
      }
      // With a host list the command runs under the relay, which proxies to the listed hosts.
      const inner = hosts ? [process.execPath, '-e', RELAY_SOURCE, command] : ['bash', '-c', command];
      const bwrap = [options.probe.bwrap, ...args, ...inner];
      // The process joins its cgroup before it execs bubblewrap, so nothing it starts escapes the limit.
      const launch: Launch = {
        file: cgroup ? '/bin/sh' : bwrap[0]!,
        args: cgroup ? ['-c', 'echo $$ > "$0" || exit 125; exec "$@"', cgroup.procsFile, ...bwrap] : bwrap.slice(1),
        ...(seccomp ? { seccomp } : {}),
        ...(hosts ? { attach: (child: ChildProcess) => serveRelayedConnections(child, hosts, options.hostProxy ?? systemHostProxyDeps) } : {}),
        explain: (output) => explainBlocked(output, { network: hosts ? 'hosts' : network, ...(cgroup ? { maxProcesses } : {}) }),
        verify: () => {
          const removedMeanwhile = gitWatch.stop();
          let gitLine: string | undefined;
          try {
            const restored = restoreGit(gitBefore, secretFinder.nestedGit(root));
            gitLine = describeGitRestore({ changed: [...new Set([...removedMeanwhile, ...restored.changed])], unrestored: restored.unrestored });
          } catch (error) {
            // Never silent: a check that could not run is said as loudly as a change.
            gitLine = `blocked by the sandbox: git's configuration could not be checked after the call (${(error as Error).message}): check .git before running git`;
          }
          const trustLine = known.after(root, legionPlan);
          return gitLine && trustLine ? `${gitLine}\n${trustLine}` : gitLine ?? trustLine;
        },
        done: () => cgroup?.remove(),
      };
      return { ok: true, launch };
    },
    dispose() {
      options.pids?.sweep(`legion-${process.pid}-`);
      if (!placeholders) return;
      try {
        chmodSync(placeholders.emptyDir, 0o700);
        rmSync(placeholders.dir, { recursive: true, force: true });
      } catch {
        // best effort
      }
      placeholders = undefined;
    },
  };
}

/**
 * `.legion/` of the workspace, hidden from commands as a whole (its web token, transcripts,
 * audit log, serve socket; and what it holds runs outside the sandbox later). Created when
 * missing, so it cannot be planted from inside (a file of that name is hidden as a file).
 */
function legionDir(root: string): string {
  const legion = join(root, '.legion');
  if (!existsSync(legion)) mkdirSync(legion, { recursive: true });
  return legion;
}

/**
 * Pinned directories without duplicates, shallowest first (a later, shallower bind would cover a
 * deeper one), leaving out those inside a read-only path (pinning one would make it writable again).
 */
function pinnedOrder(pinned: readonly string[], readOnly: readonly string[]): string[] {
  return [...new Set(pinned)]
    .filter((dir) => !readOnly.some((ro) => ro !== dir && isInside(dir, ro)))
    .sort((a, b) => a.length - b.length);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
