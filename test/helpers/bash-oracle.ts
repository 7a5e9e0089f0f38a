import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Ask real bash which commands a command line runs. Every command is run with `bash -c`,
 * with an empty PATH (nothing external can be found) and a `command_not_found_handle`
 * (loaded through BASH_ENV) that appends the name of each command bash tried to run to a
 * log: so each external command bash would have run is recorded, wherever it sat (in a
 * substitution, subshell, process substitution, eval…), and none of them actually runs.
 *
 * Everything runs in a throwaway directory `dir` (the cwd and HOME of each command), inside
 * a bubblewrap sandbox when one can be started (read-only root, private /dev and /tmp, no
 * network), otherwise directly (then `/dev/sd*` targets are rewritten into the directory).
 * stdin is /dev/null, and each command is killed after 5 seconds.
 */
export interface BashOracle {
  /** `sandbox` when bubblewrap confined the runs, `direct` otherwise. */
  readonly mode: 'sandbox' | 'direct';
  /** For each command, the names of the commands bash tried to run, in order (a newline in a name as `\\n`). */
  run(commands: readonly string[]): string[][];
}

// A newline inside a command name is logged as the two characters \\n (one name per line).
const HANDLER = `command_not_found_handle() { local n="$1"; printf '%s\\n' "\${n//$'\\n'/'\\n'}" >>"$ORACLE_LOG"; return 127; }\n`;

// The driver runs inside the sandbox: one bash per command file, each in its own directory.
// bash does not wait for a process substitution, so one may still be about to log when its
// command returns (and the sandbox, at the end, kills what is left): in its own pid namespace
// (sandbox mode, "$2" = settle) the driver waits, up to 5 s, until no process but bwrap's init
// and itself is left before the next command.
const DRIVER = `set -u
cd "$1"
settle() {
  local i p others
  for ((i = 0; i < 100; i++)); do
    others=0
    for p in /proc/[0-9]*; do p=\${p#/proc/}; [ "$p" = 1 ] || [ "$p" = $$ ] || others=$((others + 1)); done
    [ $others -eq 0 ] && return
    /bin/sleep 0.05
  done
}
for f in cmds/*; do
  n=\${f##*/}
  IFS= read -r -d '' cmd <"$f" || true # the whole file, trailing newlines kept (unlike $(<file))
  ( cd "run/$n" && ORACLE_LOG="$1/logs/$n" BASH_ENV="$1/handler.sh" HOME="$PWD" PATH="$1/empty" \\
      /usr/bin/timeout -s KILL 5 /bin/bash -c "$cmd" </dev/null >/dev/null 2>&1 )
  [ "\${2:-}" = settle ] && settle
done
exit 0
`;

export function bashOracle(dir: string): BashOracle {
  const mode = sandboxWorks(dir) ? 'sandbox' : 'direct';
  let batch = 0;
  return {
    mode,
    run(commands) {
      const work = join(dir, `batch-${batch++}`);
      for (const sub of ['cmds', 'logs', 'run', 'empty']) mkdirSync(join(work, sub), { recursive: true });
      writeFileSync(join(work, 'handler.sh'), HANDLER);
      writeFileSync(join(work, 'driver.sh'), DRIVER);
      commands.forEach((command, i) => {
        const text = mode === 'direct' ? command.replace(/\/dev\/sd/g, './dev-sd') : command;
        const name = String(i).padStart(5, '0');
        writeFileSync(join(work, 'cmds', name), text);
        mkdirSync(join(work, 'run', name));
      });
      const argv = ['/bin/bash', join(work, 'driver.sh'), work, ...(mode === 'sandbox' ? ['settle'] : [])];
      const result = mode === 'sandbox' ? spawnSync('bwrap', [...sandboxArgs(work), ...argv], { encoding: 'utf8' }) : spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
      if (result.status !== 0) throw new Error(`bash oracle driver failed (${result.status}): ${result.stderr}`);
      return commands.map((_, i) => {
        const log = join(work, 'logs', String(i).padStart(5, '0'));
        return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((line) => line !== '') : [];
      });
    },
  };
}

function sandboxArgs(work: string): string[] {
  return ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--bind', work, work, '--unshare-all', '--die-with-parent'];
}

function sandboxWorks(dir: string): boolean {
  if (process.env.LEGION_ORACLE_NO_SANDBOX === '1') return false;
  const probe = spawnSync('bwrap', [...sandboxArgs(dir), '/bin/true'], { encoding: 'utf8' });
  return probe.status === 0;
}
