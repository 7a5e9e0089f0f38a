import { mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync, accessSync, constants } from 'node:fs';
import { join } from 'node:path';

/** Processes one sandboxed call may have at once (a fork bomb stops here). */
export const SANDBOX_MAX_PROCESSES = 512;

/**
 * A pids cgroup per sandboxed call, where the machine lets this process make one: the
 * cgroup v1 `pids` hierarchy, or cgroup v2 when this process sits in the root cgroup with
 * the pids controller enabled. RLIMIT_NPROC is no substitute: the kernel does not apply it
 * to root, and for other users it counts every process of the user, not of the call.
 * Where no such cgroup can be made, calls have no process limit (docs/sandbox.md).
 */
export interface PidsCgroups {
  /** A fresh cgroup limited to `max` processes; undefined when it cannot be made now. */
  create(name: string, max: number): PidsCgroup | undefined;
  /** Remove the (empty) cgroups whose names start with `prefix` (at shutdown). */
  sweep(prefix: string): void;
}

export interface PidsCgroup {
  /** Writing a pid here moves that process (and its future children) in. */
  readonly procsFile: string;
  /** Remove the cgroup once its processes are gone: retried for a second while the last
   *  processes of the sandbox finish exiting, then left to `sweep`. */
  remove(): void;
}

/** Find where this process may create pids cgroups; undefined when nowhere. */
export function findPidsCgroups(root = '/sys/fs/cgroup', selfCgroup = readSelfCgroup()): PidsCgroups | undefined {
  const base = pidsBase(root, selfCgroup);
  if (!base) return undefined;
  try {
    accessSync(base, constants.W_OK);
  } catch {
    return undefined;
  }
  return {
    create(name, max) {
      const dir = join(base, name);
      try {
        mkdirSync(dir);
        writeFileSync(join(dir, 'pids.max'), String(max));
      } catch {
        try {
          rmdirSync(dir);
        } catch {
          // not made
        }
        return undefined;
      }
      return {
        procsFile: join(dir, 'cgroup.procs'),
        remove() {
          const attempt = (delays: readonly number[]) => {
            if (tryRemove(dir) || delays.length === 0) return;
            setTimeout(() => attempt(delays.slice(1)), delays[0]).unref();
          };
          attempt([20, 100, 300, 600]);
        },
      };
    },
    sweep(prefix) {
      let names: string[];
      try {
        names = readdirSync(base);
      } catch {
        return;
      }
      for (const name of names) if (name.startsWith(prefix)) tryRemove(join(base, name));
    },
  };
}

/** rmdir; true when the directory is gone. */
function tryRemove(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

function readSelfCgroup(): string {
  try {
    return readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return '';
  }
}

function pidsBase(root: string, selfCgroup: string): string | undefined {
  const lines = selfCgroup.split('\n').map((line) => line.split(':'));
  const v1 = lines.find((parts) => parts.length >= 3 && parts[1]!.split(',').includes('pids'));
  if (v1) return join(root, 'pids', parts2path(v1));
  const v2 = lines.find((parts) => parts.length >= 3 && parts[0] === '0' && parts[1] === '');
  if (v2 && parts2path(v2) === '/') {
    try {
      if (readFileSync(join(root, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('pids')) return root;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

const parts2path = (parts: string[]) => parts.slice(2).join(':') || '/';
