import { isInside } from './secrets';

/** Everything one bubblewrap invocation needs to know; built fresh for each call. */
export interface BwrapPolicy {
  /** Real path of the workspace: the one writable tree. */
  readonly workspaceRoot: string;
  /** Existing directories inside the workspace bound over themselves (the git directory: a mount point cannot be renamed or replaced). */
  readonly pinned?: readonly string[];
  /** Existing paths inside the workspace bound read-only over themselves (git's config, hooks…: docs/sandbox.md#git). */
  readonly readOnly: readonly string[];
  /** Existing secret paths (and .legion/), replaced by an unreadable empty directory or file. */
  readonly hiddenDirs: readonly string[];
  readonly hiddenFiles: readonly string[];
  /** Mode-000 placeholders the hidden paths are replaced with. */
  readonly emptyDir: string;
  readonly emptyFile: string;
  /** `none` unshares the network (loopback only, not the host's); `all` shares the host's. */
  readonly network: 'none' | 'all';
  /** bubblewrap ≥ 0.8 can forbid nested user namespaces itself (used when there is no seccomp filter, which does it too). */
  readonly disableUserns: boolean;
  /** File descriptor the seccomp program is read from, when there is one. */
  readonly seccompFd?: number;
}

/** Where the host's /tmp would be: a sandbox gets a private, empty one. */
const TMP = '/tmp';

/**
 * bubblewrap arguments (up to and including `--`) for the policy of docs/sandbox.md.
 * Order matters: later mounts cover earlier ones, so the read-only root comes first, then
 * the private /tmp, the writable workspace, the pinned git directory, the read-only holes in it, and last the hidden
 * secrets (which may lie inside the workspace).
 */
export function bwrapArgs(policy: BwrapPolicy): string[] {
  const args = [
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', TMP,
    '--bind', policy.workspaceRoot, policy.workspaceRoot,
  ];
  for (const path of policy.pinned ?? []) args.push('--bind', path, path);
  for (const path of policy.readOnly) args.push('--ro-bind', path, path);
  // A path under the host's /tmp is invisible already (private /tmp), unless it is in the workspace.
  const visible = (path: string) => !isInside(path, TMP) || isInside(path, policy.workspaceRoot);
  // A path inside a hidden directory is covered already (and its mount point would not exist);
  // a directory holding the workspace is not hidden (it would hide the workspace too).
  const dirs = [...new Set(policy.hiddenDirs)].filter((dir) => visible(dir) && !isInside(policy.workspaceRoot, dir));
  const covered = (path: string) => dirs.some((dir) => dir !== path && isInside(path, dir));
  for (const dir of dirs) if (!covered(dir)) args.push('--ro-bind', policy.emptyDir, dir);
  for (const file of new Set(policy.hiddenFiles)) if (visible(file) && !covered(file)) args.push('--ro-bind', policy.emptyFile, file);
  args.push('--unshare-all', '--unshare-user');
  if (policy.network === 'all') args.push('--share-net');
  if (policy.disableUserns) args.push('--disable-userns');
  args.push('--cap-drop', 'ALL', '--die-with-parent', '--new-session', '--setenv', 'TMPDIR', TMP, '--chdir', policy.workspaceRoot);
  if (policy.seccompFd !== undefined) args.push('--seccomp', String(policy.seccompFd));
  args.push('--');
  return args;
}
