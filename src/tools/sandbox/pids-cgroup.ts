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
  /**
   * Remove the cgroup once the call has ended. Processes still in it belong to the ended call
   * (a fork bomb's children still dying, or one that outlived its sandbox): they are killed —
   * `cgroup.kill` where the kernel has it, else SIGKILL to each pid listed in the cgroup —
   * and removal is retried for about ten seconds; what still fails is retried by the next
   * `create` and by `sweep`.
   */
  remove(): void;
}

/** Delays between removal attempts of one call's cgroup (ms; about ten seconds in all). */
const REMOVE_DELAYS = [20, 100, 300, 600, 1000, 2000, 3000, 3000];

/**
 * Find where this process may create pids cgroups; undefined when nowhere. Cgroups left by a
 * Legion process that is gone (named `legion-<pid>-…`, that pid no longer running) are removed.
 */
export function findPidsCgroups(root = '/sys/fs/cgroup', selfCgroup = readSelfCgroup()): PidsCgroups | undefined {
  const base = pidsBase(root, selfCgroup);
  if (!base) return undefined;
  try {
    accessSync(base, constants.W_OK);
  } catch {
    return undefined;
  }
  removeOrphans(base);
  /** Cgroups of this process whose removal failed so far. */
  const pending = new Set<string>();
  const removeNow = (dir: string): boolean => {
    if (tryRemove(dir)) return true;
    killMembers(dir);
    return tryRemove(dir);
  };
  return {
    create(name, max) {
      for (const dir of pending) if (removeNow(dir)) pending.delete(dir);
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
          if (tryRemove(dir)) return;
          pending.add(dir);
          const attempt = (delays: readonly number[]) => {
            if (!pending.has(dir)) return;
            if (removeNow(dir)) {
              pending.delete(dir);
              return;
            }
            if (delays.length > 0) setTimeout(() => attempt(delays.slice(1)), delays[0]).unref();
          };
          setTimeout(() => attempt(REMOVE_DELAYS.slice(1)), REMOVE_DELAYS[0]).unref();
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
      for (const name of names) if (name.startsWith(prefix)) removeNow(join(base, name));
    },
  };
}

/** Remove `legion-<pid>-…` cgroups whose Legion process is gone (a crash, a kill -9). */
function removeOrphans(base: string): void {
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return;
  }
  for (const name of names) {
    const match = /^legion-(\d+)-\d+$/.exec(name);
    if (!match || isRunning(Number(match[1]))) continue;
    const dir = join(base, name);
    if (!tryRemove(dir)) {
      killMembers(dir);
      tryRemove(dir);
    }
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Kill what is left in a call's cgroup: every process there was started by that call (it was
 * joined before bubblewrap started, and nothing else is ever moved in).
 */
function killMembers(dir: string): void {
  try {
    writeFileSync(join(dir, 'cgroup.kill'), '1');
    return;
  } catch {
    // cgroup v1, or a kernel before 5.14: one pid at a time
  }
  let pids: number[];
  try {
    pids = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return;
  }
  for (const pid of pids) {
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
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
