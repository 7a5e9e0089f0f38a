import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, closeSync, constants, fstatSync, openSync, readSync, watch, type FSWatcher, lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { isInside } from './secrets';
import { hostPath, realOrExistingParent } from '../host-path';

/**
 * Git's executable configuration in the workspace (docs/sandbox.md#git): what a later,
 * unsandboxed `git` reads as configuration or runs (`core.fsmonitor`, hooks, `commondir`
 * pointing at a planted config…). Two walls:
 * - mounts (`gitMounts`): the git directory is bound over itself, so it cannot be renamed,
 *   removed or replaced, and every existing surface is bound read-only over itself;
 * - a snapshot (`snapshotGit`) taken before each call and compared after it (`restoreGit`):
 *   what the mounts cannot cover — a surface that did not exist yet (`commondir`,
 *   `config.worktree`, `objects/info/alternates`, a new `worktrees/*` or `modules/*` entry) —
 *   is removed or put back, and the call is reported as blocked.
 */

/** Files (relative to a git directory) git reads as configuration or that redirect it. */
const SURFACE_FILES = ['config', 'config.worktree', 'commondir', 'objects/info/alternates', 'objects/info/http-alternates'];
/** Trees whose every entry counts (hooks run; info/ holds attributes and exclude). */
const SURFACE_TREES = ['hooks', 'info'];
/** Git directories nested in a git directory: linked worktrees' and submodules' own config and hooks. */
const NESTED = ['worktrees', 'modules'];
const NESTED_FILES = ['config', 'config.worktree', 'commondir'];
/**
 * Bounds of one snapshot: entries past MAX_ENTRIES are not recorded (so not checked); file
 * contents past MAX_CONTENT_BYTES are compared by hash only (a change cannot be put back and
 * is reported as such). docs/sandbox.md#limits. The check after a call whose snapshot before
 * was complete is not bounded by MAX_ENTRIES (a call must not flood its way past the bound):
 * past it, entries are recorded by name and kind only, up to MAX_WALK_ENTRIES, and a call that
 * goes past that too is reported as not checked.
 */
const MAX_ENTRIES = 4000;
const MAX_WALK_ENTRIES = 1_000_000;
const MAX_CONTENT_BYTES = 8 * 1024 * 1024;

/** The git directories of the workspace that lie inside it (the ones the sandbox could write). */
export function workspaceGitDirs(root: string): string[] {
  return gitDirsOf(join(root, '.git'), root);
}

/**
 * The git directory a `.git` entry stands for, when it lies inside `root`: the directory
 * itself, the target of a `.git` symlink (git follows it), or the `gitdir:` a `.git` file
 * names (a linked worktree, a submodule). Outside the workspace everything is read-only.
 */
function gitDirsOf(dotGit: string, root: string): string[] {
  let st;
  try {
    st = lstatSync(dotGit);
  } catch {
    return [];
  }
  if (st.isDirectory()) return [dotGit];
  try {
    const realRoot = realpathSync(root);
    if (st.isSymbolicLink()) {
      const target = realpathSync(dotGit);
      return isInside(target, realRoot) && statSync(target).isDirectory() ? [target] : [];
    }
    if (!st.isFile()) return [];
    const match = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'));
    if (!match) return [];
    const gitDir = resolve(dirname(dotGit), match[1]!);
    return isInside(gitDir, root) && statSync(gitDir).isDirectory() ? [gitDir] : [];
  } catch {
    return [];
  }
}

/**
 * What to mount for git: the git directories bound over themselves (writable: objects, refs,
 * index, HEAD…), then their existing surfaces read-only. `hooks/` and `info/` are created
 * when missing so they are covered by a mount too (git itself makes both on `init`).
 * `hooksPaths`: workspaceHooksPaths of this moment (one reading per call, shared with snapshotGit).
 */
export function gitMounts(root: string, hooksPaths: readonly string[]): { readonly writable: string[]; readonly readOnly: string[] } {
  const writable: string[] = [];
  const readOnly: string[] = [];
  const dotGit = join(root, '.git');
  if (isFile(dotGit)) readOnly.push(dotGit);
  for (const gitDir of workspaceGitDirs(root)) {
    writable.push(gitDir);
    for (const tree of SURFACE_TREES) {
      try {
        mkdirSync(join(gitDir, tree), { recursive: true });
      } catch {
        // a file there: bound below if it exists
      }
    }
    for (const path of surfaceRoots(gitDir)) if (exists(path)) readOnly.push(path);
  }
  readOnly.push(...hooksPaths.filter(exists));
  return { writable, readOnly };
}

/**
 * What the workspace's git config points at inside the workspace but outside `.git`, which a
 * later git runs or reads as configuration, so it is guarded like `.git/hooks` and `.git/config`:
 * `core.hooksPath` directories (husky's `.husky/`, `.githooks/`: the hooks run at the user's
 * next commit; for a folder named `_`, husky 9's, its parent too, where the hooks it runs live) and the files of `include.path` / `includeIf.*.path` (a shared `../.gitconfig`
 * is config: a `core.fsmonitor` written there runs at the next `git status`), followed
 * through the files they include. Read from the config files themselves; an include's
 * relative path is relative to the including file's directory, a hooksPath's to the root.
 * A hook that is a symbolic link is guarded where it leads (linkedHookTargets); the files hook
 * managers installed there read as their configuration too (hookManagerConfigs).
 * The user's own config files — global (`$GIT_CONFIG_GLOBAL`, else `$XDG_CONFIG_HOME/git/config`
 * and `~/.gitconfig`) and system — are read the same way, whether or not the workspace is a
 * repository: each that lies in the workspace (as written or through its symbolic link: a
 * dotfiles repository opened as the workspace, `~/.gitconfig` a link to its `gitconfig`), and
 * each file they include from it, is guarded; every git the user runs anywhere reads them.
 * A path is guarded as written and where its symbolic links lead — for a file that does not exist
 * yet, where its longest existing parent leads (`~/.config` a link into the workspace, no
 * `git/config` there yet: a sandboxed command must not create it). `env` is the one the user's
 * git runs with (HOME, XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM).
 */
export function workspaceHooksPaths(root: string, env: GitGuardEnv): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const home = env.HOME ?? '/';
  const expand = (value: string, base: string) => resolve(base, value.startsWith('~/') ? join(home, value.slice(2)) : value);
  const inGuard = (path: string, gitDir: string | null) => isInside(path, root) && (gitDir === null || !isInside(path, gitDir)) && path !== root;
  const guard = (path: string, gitDir: string | null) => {
    for (const candidate of [path, realOrExistingParent(path)]) if (inGuard(candidate, gitDir)) out.push(candidate);
  };
  const readConfig = (file: string, gitDir: string | null, depth: number) => {
    if (seen.has(file) || depth > 8) return;
    seen.add(file);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      return;
    }
    let section = '';
    for (const line of text.split('\n')) {
      const header = /^\s*\[\s*([^\]\s"]+)/.exec(line);
      if (header) section = header[1]!.toLowerCase();
      // git reads a variable on the header's line too (`[core] hooksPath = .githooks`).
      const whole = header && /^\s*\[\s*[^\]\s"]+(?:\s*"(?:[^"\\\n]|\\.)*")?\s*\]/.exec(line);
      if (header && !whole) continue;
      const entry = /^\s*(hookspath|path)\s*=\s*(?:"([^"]*)"|([^#;]*?))\s*(?:[#;].*)?$/i.exec(whole ? line.slice(whole[0].length) : line);
      if (!entry) continue;
      const value = (entry[2] ?? entry[3] ?? '').trim();
      if (!value) continue;
      const key = entry[1]!.toLowerCase();
      if (section === 'core' && key === 'hookspath') {
        const hooks = expand(value, root);
        guard(hooks, gitDir);
        hookDirs.push({ dir: hooks, gitDir });
        // husky 9's `core.hooksPath = .husky/_`: each hook there sources `_/h`, which runs the
        // project's own hook one folder up (`.husky/pre-commit`): that folder is what runs.
        if (basename(hooks) === '_') guard(dirname(hooks), gitDir);
      } else if ((section === 'include' || section === 'includeif') && key === 'path') {
        const path = expand(value, dirname(file));
        guard(path, gitDir);
        readConfig(path, gitDir, depth + 1);
      }
    }
  };
  /** The folders hooks run from: each git directory's `hooks/` and the hooksPath folders. */
  const hookDirs: { dir: string; gitDir: string | null }[] = [];
  for (const gitDir of workspaceGitDirs(root)) {
    hookDirs.push({ dir: join(gitDir, 'hooks'), gitDir });
    for (const file of ['config', 'config.worktree']) readConfig(join(gitDir, file), gitDir, 0);
  }
  for (const file of userGitConfigs(home, env)) {
    // Absent ones too: git reads what a sandboxed command would create there.
    guard(file, null);
    readConfig(file, null, 0);
  }
  for (const { dir, gitDir } of hookDirs) {
    const names = hookNames(dir);
    for (const file of hookManagerConfigs(dir, names)) guard(resolve(root, file), gitDir);
    // A hook that is a symbolic link runs the file it leads to, wherever that lies (inside .git/ too).
    for (const target of linkedHookTargets(dir, names)) guard(target, null);
  }
  return [...new Set(out)];
}

/** Hook files read per folder at most, and bytes read of each (a hook manager's script is a few hundred). */
const MAX_HOOK_FILES = 64;
const MAX_HOOK_BYTES = 16 * 1024;
/**
 * What lefthook runs from the work tree (https://lefthook.dev/configuration): its main config and the
 * `-local` one it merges over it, in every format it reads and at the root or under `.config/` (a
 * `-local` one need not exist yet: lefthook merges whichever it finds), and the folders its
 * `scripts:` run from (`source_dir` `.lefthook/`, `source_dir_local` `.lefthook-local/`).
 */
const LEFTHOOK_FILES = [
  ...['lefthook', 'lefthook-local'].flatMap((name) => ['yml', 'yaml', 'toml', 'json', 'jsonc'].flatMap((ext) => [`${name}.${ext}`, `.${name}.${ext}`, `.config/${name}.${ext}`])),
  '.lefthook', '.lefthook-local',
];

/** The hooks in `dir` (one listing, both readers below): `.sample` files are git's inert examples. */
function hookNames(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => !name.endsWith('.sample')).slice(0, MAX_HOOK_FILES);
  } catch {
    return [];
  }
}

/**
 * The work-tree files (relative to the root) that the hooks `names` installed in `dir` run as their
 * configuration: a hook manager keeps the commands a hook runs there, so they are as executable as
 * the hook. The pre-commit framework's hook names its file with `--config` (`.pre-commit-config.yaml`
 * by default; a `repo: local` hook's `entry` is a command); lefthook's reads `lefthook.yml` and the
 * others of LEFTHOOK_FILES. Other managers (husky 4's package.json, overcommit…) are not
 * recognised (docs/sandbox.md#git).
 */
function hookManagerConfigs(dir: string, names: readonly string[]): string[] {
  const out = new Set<string>();
  for (const name of names) {
    let text: string;
    try {
      const fd = openSync(join(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      try {
        if (!fstatSync(fd).isFile()) continue;
        const buffer = Buffer.alloc(MAX_HOOK_BYTES);
        text = buffer.toString('utf8', 0, readSync(fd, buffer, 0, MAX_HOOK_BYTES, 0));
      } finally {
        closeSync(fd);
      }
    } catch {
      continue;
    }
    if (/pre-commit|pre_commit/.test(text)) {
      for (const match of text.matchAll(/--config[= ]["']?([^\s"')]+)/g)) out.add(match[1]!);
      if (!/--config[= ]/.test(text)) out.add('.pre-commit-config.yaml');
    }
    if (/lefthook/.test(text)) for (const file of LEFTHOOK_FILES) out.add(file);
  }
  return [...out];
}

/**
 * The files the hooks `names` in `dir` that are symbolic links lead to: a project that keeps its hooks in
 * the work tree links them (`ln -s ../../scripts/pre-commit .git/hooks/pre-commit`), and git runs
 * the target, which is no hook folder's. Each as its link reads (a dangling link's target, which a
 * command could create) and as it resolves.
 */
function linkedHookTargets(dir: string, names: readonly string[]): string[] {
  const out: string[] = [];
  for (const name of names) {
    const path = join(dir, name);
    try {
      if (!lstatSync(path).isSymbolicLink()) continue;
      out.push(resolve(dir, readlinkSync(path)));
      out.push(realpathSync(path));
    } catch {
      // gone, or dangling: its target as written is kept
    }
  }
  return out;
}

/** The variables the git guard reads: those of the user's git (HOME, XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL, GIT_CONFIG_SYSTEM) and PATH. */
export type GitGuardEnv = Readonly<Record<string, string | undefined>>;

/** The config files git reads for the user besides the repository's: global, then system. */
function userGitConfigs(home: string, env: GitGuardEnv): string[] {
  const global = env.GIT_CONFIG_GLOBAL;
  const xdg = env.XDG_CONFIG_HOME || join(home, '.config');
  return [...(global ? [resolve(global)] : [join(xdg, 'git', 'config'), join(home, '.gitconfig')]), env.GIT_CONFIG_SYSTEM || '/etc/gitconfig'];
}

/**
 * The `.git` entries of the workspace repository's submodules, as git lists them (the gitlinks
 * of its index, `git ls-files --stage`): `git status` runs git in each wherever it lies —
 * under `node_modules`, deeper than the workspace scan reaches — so the scan alone cannot
 * find them all. git runs with `core.fsmonitor` off and no optional locks (it reads the index
 * and runs nothing); a listing that fails adds nothing (the scan still applies).
 */
export function submoduleDotGits(root: string, env: GitGuardEnv): string[] {
  const gitDir = workspaceGitDirs(root)[0];
  if (gitDir === undefined) return [];
  // Listed again only when the index changed (a call that leaves it alone costs a stat).
  let key: string;
  try {
    const st = statSync(join(gitDir, 'index'), { bigint: true });
    key = `${gitDir}\0${st.ino}\0${st.size}\0${st.mtimeNs}\0${st.ctimeNs}`;
  } catch {
    return [];
  }
  const cached = submoduleCache.get(root);
  if (cached?.key === key) return cached.dotGits;
  const dotGits = listSubmoduleDotGits(root, env);
  if (submoduleCache.size > 64) submoduleCache.clear();
  submoduleCache.set(root, { key, dotGits });
  return dotGits;
}

const submoduleCache = new Map<string, { readonly key: string; readonly dotGits: string[] }>();

function listSubmoduleDotGits(root: string, env: GitGuardEnv): string[] {
  let listing: string;
  try {
    listing = execFileSync('git', ['-c', 'core.fsmonitor=false', '--no-optional-locks', 'ls-files', '--stage', '-z'], {
      cwd: root,
      encoding: 'utf8',
      env: { PATH: hostPath(env.PATH ?? '/usr/bin:/bin', root), HOME: env.HOME ?? '/', GIT_CONFIG_NOSYSTEM: '1' },
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 256 * 1024 * 1024,
      timeout: 10_000,
    });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const record of listing.split('\0')) {
    if (!record.startsWith('160000 ')) continue;
    const tab = record.indexOf('\t');
    if (tab !== -1) out.push(join(root, record.slice(tab + 1), '.git'));
  }
  return out;
}

/** One entry of a snapshot. */
interface Entry {
  readonly kind: 'file' | 'dir' | 'symlink' | 'other';
  readonly mode: number;
  readonly hash: string;
  /** The bytes (files) or target (symlinks), to put back; absent beyond the bounds. */
  readonly content?: Buffer;
}

export interface GitSnapshot {
  readonly root: string;
  /** The git directories guarded: the workspace's own and those of nested `.git` entries. */
  readonly gitDirs: readonly string[];
  /** The `.git` entry of the workspace (kind, inode, content when a file). */
  readonly dotGit: string;
  readonly entries: ReadonlyMap<string, Entry>;
  /** Entries were left out (MAX_ENTRIES, or MAX_WALK_ENTRIES for a check after a call). */
  readonly truncated: boolean;
  /** The environment the snapshot was taken with; the check after the call uses it too. */
  readonly env: GitGuardEnv;
}

/**
 * Every surface of the workspace's git directories as it is now; `nested` are the `.git`
 * entries found below the root (a nested repository becomes a submodule the moment the
 * index holds a gitlink for it, and `git status` then runs git in it). `hooksPaths`: the
 * caller's workspaceHooksPaths of this moment, else read here (the check after a call reads
 * them again: the call may have changed what the config includes).
 */
export function snapshotGit(root: string, env: GitGuardEnv, nested: readonly string[] = [], complete?: ReadonlyMap<string, Entry>, hooksPaths: readonly string[] = workspaceHooksPaths(root, env)): GitSnapshot {
  const entries = new Map<string, Entry>();
  let bytes = 0;
  let truncated = false;
  const realRoot = realpathSync(root);
  const record = (path: string) => {
    // `complete`: the entries of a snapshot that was not truncated, for the check after a call.
    // Past MAX_ENTRIES an entry not among them is new whatever it holds: its name and kind suffice.
    const past = entries.size >= MAX_ENTRIES;
    if (past && (!complete || entries.size >= MAX_WALK_ENTRIES)) {
      truncated = true;
      return;
    }
    if (!parentUnder(path, realRoot)) return;
    let st;
    try {
      st = lstatSync(path);
    } catch {
      return;
    }
    if (past && !complete!.has(path) && !st.isDirectory()) {
      entries.set(path, { kind: st.isSymbolicLink() ? 'symlink' : st.isFile() ? 'file' : 'other', mode: st.mode, hash: '' });
    } else if (st.isSymbolicLink()) {
      const target = readlinkSync(path);
      entries.set(path, { kind: 'symlink', mode: st.mode, hash: target, content: Buffer.from(target) });
    } else if (st.isFile()) {
      const data = readFileSync(path);
      const keep = bytes + data.length <= MAX_CONTENT_BYTES;
      if (keep) bytes += data.length;
      entries.set(path, { kind: 'file', mode: st.mode, hash: sha256(data), ...(keep ? { content: data } : {}) });
    } else if (st.isDirectory()) {
      entries.set(path, { kind: 'dir', mode: st.mode, hash: '' });
      let names: string[] = [];
      try {
        names = readdirSync(path).sort();
      } catch {
        // unreadable: compared as an empty directory
      }
      for (const name of names) record(join(path, name));
    } else {
      entries.set(path, { kind: 'other', mode: st.mode, hash: '' });
    }
  };
  const dotGits = [...nested, ...submoduleDotGits(root, env)];
  const gitDirs = [...new Set([...workspaceGitDirs(root), ...dotGits.flatMap((dotGit) => gitDirsOf(dotGit, root))])];
  for (const gitDir of gitDirs) for (const path of surfaceRoots(gitDir)) record(path);
  for (const path of hooksPaths) record(path);
  return { root, gitDirs, dotGit: dotGitIdentity(root), entries, truncated, env };
}

/**
 * Compare the surfaces with `before` and undo every difference: what appeared is removed,
 * what changed or vanished is written back. Returns what was found (relative paths), empty
 * when nothing changed; `unrestored` lists what could not be put back.
 */
export function restoreGit(before: GitSnapshot, nested: readonly string[] = []): { changed: string[]; unrestored: string[] } {
  const after = snapshotGit(before.root, before.env, nested, before.truncated ? undefined : before.entries);
  const realRoot = realpathSync(before.root);
  const changed: string[] = [];
  const unrestored: string[] = [];
  if (after.truncated && !before.truncated) {
    // The call made more entries than even the check after it walks: what lies past them is unknown.
    changed.push('.git');
    unrestored.push(`.git (more than ${MAX_WALK_ENTRIES} entries after the call: not all checked)`);
  }
  // Nothing is removed or written through a symlink leading out of the workspace.
  const safe = (path: string) => parentUnder(path, realRoot);
  const rel = (path: string) => relative(before.root, path) || '.';
  if (before.dotGit !== 'absent' && dotGitIdentity(before.root) !== before.dotGit) {
    // The mounts make this impossible from inside; if it happens anyway, say so loudly.
    changed.push('.git');
    unrestored.push('.git (replaced)');
  }
  // A repository made during the call (`git init`, `git clone`) keeps what those write themselves.
  const fresh = after.gitDirs.filter((gitDir) => !before.gitDirs.includes(gitDir));
  // Appeared: remove, outermost first (removing a directory takes what is inside with it).
  for (const path of [...after.entries.keys()].sort()) {
    if (before.entries.has(path) || !exists(path)) continue;
    if (fresh.some((gitDir) => isPlainNewEntry(gitDir, path))) continue;
    changed.push(rel(path));
    try {
      if (!safe(path)) throw new Error('outside the workspace');
      rmSync(path, { recursive: true, force: true });
    } catch {
      unrestored.push(rel(path));
    }
  }
  // Changed or vanished: put back, outermost first (a directory before its files).
  for (const [path, was] of [...before.entries].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const now = after.entries.get(path);
    if (now && now.kind === was.kind && now.hash === was.hash && (now.mode & 0o7777) === (was.mode & 0o7777)) continue;
    changed.push(rel(path));
    try {
      if (!safe(path)) throw new Error('outside the workspace');
      if (now && now.kind !== was.kind) rmSync(path, { recursive: true, force: true });
      if (was.kind === 'dir') {
        mkdirSync(path, { recursive: true });
        chmodSync(path, was.mode & 0o7777);
      } else if (was.kind === 'file' && was.content) {
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, was.content);
        chmodSync(path, was.mode & 0o7777);
      } else if (was.kind === 'symlink' && was.content) {
        rmSync(path, { force: true });
        symlinkSync(was.content.toString(), path);
      } else {
        unrestored.push(rel(path));
      }
    } catch {
      unrestored.push(rel(path));
    }
  }
  return { changed: [...new Set(changed)], unrestored };
}

/** Names that redirect git when they appear, watched for during a call. */
const REDIRECTS = new Set(['commondir', 'config.worktree', 'alternates', 'http-alternates']);

/**
 * During a call: remove a redirecting file (`commondir`, `config.worktree`, `alternates`) the
 * moment it appears in a git directory (inotify), so a `git` the user runs on the host while the
 * call is still going does not read it. `stop` ends the watch and returns what was removed
 * (relative paths). The check after the call (`restoreGit`) stays the guarantee; this narrows
 * the window to the time between a write and its event.
 */
export function watchGit(root: string): { stop(): string[] } {
  const removed: string[] = [];
  const watchers: FSWatcher[] = [];
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    return { stop: () => removed };
  }
  for (const gitDir of workspaceGitDirs(root)) {
    for (const dir of [gitDir, join(gitDir, 'objects', 'info')]) {
      try {
        const watcher = watch(dir, { persistent: false }, (_event, name) => {
          if (!name || !REDIRECTS.has(String(name))) return;
          const path = join(dir, String(name));
          if (!exists(path) || !parentUnder(path, realRoot)) return;
          try {
            rmSync(path, { recursive: true, force: true });
            removed.push(relative(root, path));
          } catch {
            // left to restoreGit
          }
        });
        watcher.on('error', () => undefined);
        watchers.push(watcher);
      } catch {
        // not there: nothing to watch
      }
    }
  }
  return {
    stop() {
      for (const watcher of watchers) watcher.close();
      return removed;
    },
  };
}

/** The line for a call whose git surfaces had to be restored. */
export function describeGitRestore(result: { changed: readonly string[]; unrestored: readonly string[] }): string | undefined {
  if (result.changed.length === 0) return undefined;
  const shown = result.changed.slice(0, 6).join(', ') + (result.changed.length > 6 ? ` and ${result.changed.length - 6} more` : '');
  const rest = result.unrestored.length > 0 ? `; could NOT restore ${result.unrestored.join(', ')}: check them before running git` : '; reverted';
  return `blocked by the sandbox: the command changed git's executable configuration (${shown})${rest} (see docs/sandbox.md#git)`;
}

/** Config keys `git init` and `git clone` write, by section: nothing git runs. */
const PLAIN_KEYS: Readonly<Record<string, readonly string[]>> = {
  core: ['repositoryformatversion', 'filemode', 'bare', 'logallrefupdates', 'ignorecase', 'precomposeunicode', 'symlinks'],
  extensions: ['objectformat'],
  remote: ['url', 'fetch'],
  branch: ['remote', 'merge'],
  submodule: ['url', 'active'],
};

/** Does a new repository's config hold only what `git init`/`git clone` write? */
export function isPlainConfig(text: string): boolean {
  let section: string | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"[^"\\]*")?\s*\]$/.exec(line);
    if (header) {
      section = header[1]!.toLowerCase();
      if (!PLAIN_KEYS[section]) return false;
      continue;
    }
    const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=|$)/.exec(line);
    if (!section || !entry || !PLAIN_KEYS[section]!.includes(entry[1]!.toLowerCase())) return false;
    if (section === 'remote' && /^url\s*=\s*"?ext::/i.test(line)) return false;
  }
  return true;
}

/** Is `path` in the new git directory `gitDir` something a plain `git init`/`clone` makes (sample hooks, info/exclude, a plain config)? */
function isPlainNewEntry(gitDir: string, path: string): boolean {
  const rel = relative(gitDir, path);
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return false;
  }
  // Real directories and files only: a symlinked `hooks/` would run what it points at.
  if (rel === 'hooks' || rel === 'info') return st.isDirectory();
  if (!st.isFile()) return false;
  if (rel === join('info', 'exclude')) return true;
  if (dirname(rel) === 'hooks' && rel.endsWith('.sample')) return true;
  if (rel !== 'config') return false;
  try {
    return isPlainConfig(readFileSync(path, 'utf8'));
  } catch {
    return false;
  }
}

/** The surface paths of one git directory (existing or not), nested worktrees and modules included. */
function surfaceRoots(gitDir: string): string[] {
  const out = [...SURFACE_FILES, ...SURFACE_TREES].map((p) => join(gitDir, p));
  for (const nested of NESTED) {
    let names: string[] = [];
    try {
      names = readdirSync(join(gitDir, nested));
    } catch {
      continue;
    }
    for (const name of names.sort()) {
      const dir = join(gitDir, nested, name);
      out.push(...NESTED_FILES.map((f) => join(dir, f)), join(dir, 'hooks'));
    }
  }
  return out;
}

function dotGitIdentity(root: string): string {
  const dotGit = join(root, '.git');
  try {
    const st = lstatSync(dotGit);
    if (st.isFile()) return `file:${sha256(readFileSync(dotGit))}`;
    return `${st.isDirectory() ? 'dir' : 'other'}:${st.dev}:${st.ino}`;
  } catch {
    return 'absent';
  }
}

/** Does `path`'s parent (its nearest existing ancestor) resolve, symlinks followed, inside `realRoot`? */
function parentUnder(path: string, realRoot: string): boolean {
  let dir = dirname(path);
  while (!exists(dir)) {
    const up = dirname(dir);
    if (up === dir) return false;
    dir = up;
  }
  try {
    return isInside(realpathSync(dir), realRoot);
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function isFile(path: string): boolean {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
