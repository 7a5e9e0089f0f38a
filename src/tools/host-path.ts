import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, resolve, sep } from 'node:path';
import { surelyAbsent } from '../storage/absent';

/**
 * The PATH of a program Legion runs itself, outside any sandbox — git for checkpoints, worktrees
 * and the sandbox's git guard, bubblewrap found at start (docs/sandbox.md#environment): `path`
 * without the entries a sandboxed command could write, so a `git` or `bwrap` it planted there is
 * never what Legion runs. The user's PATH may name a folder of the workspace (an activated
 * `.venv/bin`, `node_modules/.bin` under `npx legion`, direnv's `PATH_add bin`), and the
 * workspace is writable in the sandbox. Dropped: empty and relative entries (they name the
 * working directory), and every entry inside the workspace, as written or with its symbolic
 * links followed (the longest existing part of it: a folder created later lies where its
 * existing parent leads). `workTree` is the workspace root, or a worktree of an isolated
 * session under its `.legion/worktrees/`: then the workspace is the folder holding `.legion/`.
 * Remembered per (path, workspace): an entry outside the workspace cannot be changed by a
 * sandboxed command, and one inside is dropped as written.
 */
export function hostPath(path: string, workTree: string): string {
  const root = workspaceOf(workTree);
  const key = `${root}\0${path}`;
  const known = cache.get(key);
  if (known !== undefined) return known;
  const roots = [resolve(root), realOrExistingParent(resolve(root))];
  const kept = path.split(':').filter((entry) => {
    if (!isAbsolute(entry)) return false;
    const lexical = resolve(entry);
    return !roots.some((r) => isInside(lexical, r) || isInside(realOrExistingParent(lexical), r));
  });
  const result = kept.join(':');
  if (cache.size > 64) cache.clear();
  cache.set(key, result);
  return result;
}

const cache = new Map<string, string>();

/**
 * The file Legion starts for `command` itself (a program of the user's configuration, outside any
 * sandbox): a name with a `/` as it is; a bare name looked for on `hostPath(path, workTree)`,
 * never in a folder of the workspace, where a sandboxed command could have planted it. Null when
 * no such folder holds an executable file of that name.
 */
export function hostCommand(command: string, path: string, workTree: string): string | null {
  if (command.includes('/')) return command;
  for (const dir of hostPath(path, workTree).split(':')) {
    if (dir === '') continue;
    const file = resolve(dir, command);
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * The arguments Legion starts `program` with for a server of the user's own configuration, which
 * runs outside any sandbox with the workspace as its working folder. npm's package runner (`npx`,
 * `npm exec`, `npm x`, and `npm init <initializer>` / `npm create`, which run it) looks for the
 * package in the project around that folder first — `node_modules/.bin/<bin>`,
 * `node_modules/<package>` — and reads that project's `.npmrc` (`script-shell` picks the program
 * that runs the bin): the workspace, which a sandboxed command may write. `--prefix=<outside>`
 * first makes `outside` npm's project instead (a folder with no `node_modules`, `package.json`
 * nor `.npmrc`, out of the sandbox's reach), so the package comes from the registry or npm's
 * cache, as the configuration means. For `npm`, the command is found past its global options
 * (npmCommandMayBe). Other programs' arguments are returned as they are (docs/mcp.md#trust lists
 * the runners this does not cover).
 */
export function hostArgs(program: string, args: readonly string[], outside: string): string[] {
  const name = basename(program);
  if (name === 'node' || name === 'nodejs') {
    // npm's own scripts run by node (`node …/npm/bin/npx-cli.js -y pkg`): the same runners.
    const script = nodeScriptIndex(args);
    if (script < 0) return [...args];
    const rest = args.slice(script + 1);
    const cli = basename(args[script]!);
    const runner = cli === 'npx-cli.js' || (cli === 'npm-cli.js' && npmCommandMayBe(rest, NPM_RUNNERS));
    return runner ? [...args.slice(0, script + 1), `--prefix=${outside}`, ...rest] : [...args];
  }
  const runner = name === 'npx' || (name === 'npm' && npmCommandMayBe(args, NPM_RUNNERS));
  return runner ? [`--prefix=${outside}`, ...args] : [...args];
}

/** node's options that take their value as the next word. */
const NODE_VALUE_OPTIONS = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader', '--conditions', '-C', '--input-type', '--title', '--env-file']);

/** Where node's script is in `args` (past node's options), or -1 (none: `-e`, `-p`, `-`, or no word). */
function nodeScriptIndex(args: readonly string[]): number {
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    if (arg === '--') return i + 1 < args.length ? i + 1 : -1;
    if (arg === '-e' || arg === '--eval' || arg === '-p' || arg === '--print' || arg === '-') return -1;
    if (!arg.startsWith('-')) return i;
    if (NODE_VALUE_OPTIONS.has(arg)) i += 1;
  }
  return -1;
}

/** npm commands that run a package's bin through npm's package runner. */
const NPM_RUNNERS = new Set(['exec', 'x', 'init', 'create', 'innit']);
/** npm's global flags that never take a value: the word after one is the command. */
const NPM_FLAGS = new Set(['-y', '--yes', '-s', '--silent', '-q', '--quiet', '-d', '--verbose', '-g', '--global', '-f', '--force', '--json', '--offline', '--prefer-offline', '--prefer-online', '--ws', '--workspaces', '--include-workspace-root', '--ignore-scripts', '--foreground-scripts', '--legacy-peer-deps', '--no-audit', '--no-fund']);

/**
 * Whether npm may take one of `commands` as its command in `args`. npm's options come before the
 * command too, and some take their value as the next word (`--registry URL`, `--cache /x`,
 * `-w app`): a word after an option that may take a value (any but NPM_FLAGS, none with `=`)
 * may be that value or the command, so both readings are kept. Ambiguity answers yes: an extra
 * `--prefix` can only make npm miss a project, never run the workspace's.
 */
function npmCommandMayBe(args: readonly string[], commands: ReadonlySet<string>): boolean {
  let afterValueOption = false;
  for (const arg of args) {
    if (arg === '--') return false;
    if (arg.startsWith('-')) {
      afterValueOption = !arg.includes('=') && !NPM_FLAGS.has(arg) && !arg.startsWith('--no-');
      continue;
    }
    if (commands.has(arg)) return true;
    // Surely the command (nothing before it could take it as a value): the rest are its arguments.
    if (!afterValueOption) return false;
    afterValueOption = false;
  }
  return false;
}

/** Forget every PATH remembered: the snapshot build's throwaway composition (src/cli/warm-compose.ts) must leave none of its workspace in the heap. */
export function forgetHostPaths(): void {
  cache.clear();
}

/** The workspace a work tree belongs to: the folder holding `.legion/` when it lies inside one (a session's worktree). */
function workspaceOf(workTree: string): string {
  const marker = `${sep}.legion${sep}`;
  const at = resolve(workTree).indexOf(marker);
  return at === -1 ? resolve(workTree) : resolve(workTree).slice(0, at);
}

/** `path` with its symbolic links followed; for a path that does not exist, its longest existing parent's real path joined with the rest. */
export function realOrExistingParent(path: string): string {
  // A missing path is common here (npm puts `node_modules/.bin` of every ancestor folder on
  // PATH): answered by `surelyAbsent`, which throws no error, before every start's first frame
  // (docs/performance.md#start-up).
  if (!surelyAbsent(path)) {
    try {
      return realpathSync(path);
    } catch {
      // gone meanwhile, or a link that leads nowhere: as a missing path
    }
  }
  const parent = dirname(path);
  return parent === path ? path : resolve(realOrExistingParent(parent), basename(path));
}

function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}
