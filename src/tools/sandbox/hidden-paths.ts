import { existsSync, realpathSync, statSync } from 'node:fs';
import { readdirSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { isInside } from './secrets';

/**
 * Credentials of the usual tools, hidden from every sandboxed command whatever the rules say
 * (docs/sandbox.md#what-is-hidden), relative to the home directory. `config/` stands for
 * `$XDG_CONFIG_HOME` and for `~/.config` (a tool may have written either). A directory hides
 * everything in it.
 */
export const HIDDEN_HOME_PATHS: readonly string[] = [
  // keys and cloud credentials
  '.ssh', '.gnupg', '.aws', '.azure', 'config/gcloud', '.oci', '.kube/config', '.docker/config.json',
  '.terraform.d/credentials.tfrc.json', '.vault-token', 'config/doctl', '.s3cfg', '.boto', 'config/rclone/rclone.conf',
  // forges and package registries
  'config/gh/hosts.yml', 'config/hub', 'config/glab-cli', '.git-credentials', '.netrc', '.npmrc', '.yarnrc.yml', '.pypirc',
  '.m2/settings.xml', '.m2/settings-security.xml', '.gradle/gradle.properties', '.cargo/credentials', '.cargo/credentials.toml',
  '.gem/credentials', '.nuget/NuGet/NuGet.Config', '.composer/auth.json', 'config/composer/auth.json',
  // databases
  '.pgpass', '.my.cnf', '.mongorc.js',
  // shell and REPL histories (commands typed with secrets in them)
  '.bash_history', '.zsh_history', '.sh_history', '.history', '.local/share/fish/fish_history', '.python_history',
  '.node_repl_history', '.psql_history', '.mysql_history', '.sqlite_history', '.rediscli_history', '.lesshst',
  // password stores and key rings
  '.password-store', '.local/share/keyrings', '.pki', 'config/op', 'config/Bitwarden CLI',
  // browser and mail profiles (session cookies, saved passwords, histories: the web page's URL holds its token),
  // installed natively, as snaps (Ubuntu's Firefox and Chromium) and as Flatpaks, each of which keeps its own
  '.mozilla', '.thunderbird', 'config/google-chrome', 'config/chromium', 'config/BraveSoftware', 'config/microsoft-edge',
  'config/vivaldi', 'config/opera', '.librewolf', 'config/google-chrome-beta', 'config/google-chrome-unstable',
  // Firefox 147 on keeps new profiles where the XDG spec says ($XDG_CONFIG_HOME/mozilla/firefox), in a Flatpak too
  'config/mozilla', '.var/app/org.mozilla.firefox/config/mozilla',
  'snap/firefox/common/.mozilla', 'snap/chromium/common/chromium', 'snap/thunderbird/common/.thunderbird',
  '.var/app/org.mozilla.firefox/.mozilla', '.var/app/org.mozilla.Thunderbird/.thunderbird', '.var/app/com.google.Chrome/config/google-chrome',
  '.var/app/org.chromium.Chromium/config/chromium', '.var/app/com.brave.Browser/config/BraveSoftware', '.var/app/com.microsoft.Edge/config/microsoft-edge',
  // Legion's own user config (its tokens)
  'config/legion',
];

export interface HiddenPathsInput {
  readonly home: string;
  readonly xdgConfigHome?: string;
  /** `$XDG_RUNTIME_DIR`: sockets and session secrets (Legion's serve socket may live there). */
  readonly runtimeDir?: string;
  readonly workspaceRoot: string;
  /** The config's `sandbox.hide`: absolute, `~/…`, or relative to the workspace. */
  readonly extra: readonly string[];
}

/**
 * The fixed credential paths, the runtime directory and `sandbox.hide`, as real paths split
 * into directories and files; paths that do not exist now are left out (bubblewrap can only
 * cover what exists: docs/sandbox.md#limits).
 */
export function hiddenPaths(input: HiddenPathsInput): { dirs: string[]; files: string[] } {
  const config = input.xdgConfigHome && input.xdgConfigHome.length > 0 ? input.xdgConfigHome : join(input.home, '.config');
  const configDirs = [...new Set([config, join(input.home, '.config')])];
  const fromHome = HIDDEN_HOME_PATHS.flatMap((p) => (p.startsWith('config/') ? configDirs.map((dir) => join(dir, p.slice('config/'.length))) : [join(input.home, p)]));
  const extra = input.extra.map((p) => (p.startsWith('~/') ? join(input.home, p.slice(2)) : isAbsolute(p) ? p : resolve(input.workspaceRoot, p)));
  const dirs = new Set<string>();
  const files = new Set<string>();
  for (const path of [...fromHome, ...(input.runtimeDir ? [input.runtimeDir] : []), ...extra]) {
    if (!existsSync(path)) continue; // most of the list is absent: no exception per path
    try {
      const real = realpathSync(path);
      (statSync(real).isDirectory() ? dirs : files).add(real);
    } catch {
      // not there: nothing to hide
    }
  }
  return { dirs: [...dirs], files: [...files] };
}

/**
 * When the workspace lies inside another workspace's `.legion/` (an isolated session's
 * worktree, `.legion/worktrees/<session>`), that `.legion/` cannot be hidden as a whole (it
 * holds the workspace): everything in it off the path down to the workspace is hidden instead
 * (web token, transcripts, audit log, serve socket of the outer workspace).
 */
export function enclosingLegionPaths(root: string): { dirs: string[]; files: string[] } {
  const dirs: string[] = [];
  const files: string[] = [];
  let legion: string | undefined;
  for (let dir = dirname(root); dirname(dir) !== dir; dir = dirname(dir)) {
    if (basename(dir) === '.legion') legion = dir;
  }
  if (!legion) return { dirs, files };
  for (let level = legion; level !== root && isInside(root, level); ) {
    let next: string | undefined;
    let entries;
    try {
      entries = readdirSync(level, { withFileTypes: true });
    } catch {
      break;
    }
    for (const entry of entries) {
      const path = join(level, entry.name);
      if (isInside(root, path)) next = path;
      else (entry.isDirectory() ? dirs : files).push(path);
    }
    if (!next) break;
    level = next;
  }
  return { dirs, files };
}
