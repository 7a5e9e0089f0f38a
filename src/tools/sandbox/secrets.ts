import { readdirSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import micromatch from 'micromatch';

export interface SecretScan {
  readonly workspaceRoot: string;
  readonly home: string;
}

export interface SecretPaths {
  readonly dirs: string[];
  readonly files: string[];
  /**
   * `.git` entries found in the workspace below its root (nested repositories, submodules' `.git`
   * files) and directories shaped like a git directory (a bare repository; the root included).
   */
  readonly nestedGit: string[];
}

/** Bounds of one root's scan. */
export interface SecretScanLimits {
  /** Entries (files and directories) matched against the secret patterns per root. */
  readonly entries?: number;
}

export const SECRET_SCAN_LIMIT = 20_000;
/** Trees never entered: large, and holding no user secrets by convention. */
const SKIPPED = new Set(['node_modules', '.git', '.legion', '.cache', '.npm', '.nvm', '.cargo', '.rustup', '.pyenv', '.local', 'dist', 'build', 'target']);

/** One root's scan result, valid while none of the directories it read changed (their mtimes). */
interface RootScan {
  readonly dirs: string[];
  readonly files: string[];
  /** Every entry named `.git` met on the way (not entered), and every directory shaped like a git directory (the root included). */
  readonly gitEntries: string[];
  readonly seen: Map<string, number>;
}

export interface SecretFinder {
  /**
   * Files and directories matching the secret patterns, and every `.legion/` directory met, that a
   * sandboxed command could otherwise read: in the workspace (8 levels deep), in the home directory (3 levels), and
   * directly inside each directory above the workspace (a `.env` next to the project).
   * Every root is bounded by `limits.entries` entries; what lies beyond is not hidden
   * (docs/sandbox.md). The `.legion/` folders Legion honours are not looked for here: they are
   * known (the trust registry; known-legion.ts). Paths are real paths (symlinks resolved), as bubblewrap needs them. A root is read again
   * only when one of the directories read last time changed (a new file changes its
   * directory's mtime), so repeated calls cost a stat per directory.
   */
  find(scan: SecretScan): SecretPaths;
  /** Only `nestedGit` of the workspace (after a call: its scan alone, from the cache when unchanged). */
  nestedGit(workspaceRoot: string): string[];
}

/**
 * Whether a path relative to the workspace (or another root) matches one of the secret `patterns`
 * (globs such as `**\/.env`, `**\/*.pem`, `**\/.ssh/**`; dot files included, case-insensitive).
 */
export function secretPathMatcher(patterns: readonly string[]): (path: string) => boolean {
  const key = JSON.stringify(patterns);
  let combined = combinedPatterns.get(key);
  if (!combined) {
    const sources = patterns.map((pattern) => micromatch.makeRe(pattern, { dot: true, nocase: true }).source);
    combined = sources.length > 0 ? new RegExp(sources.map((s) => `(?:${s})`).join('|'), 'i') : /(?!)/;
    if (combinedPatterns.size >= COMBINED_KEPT) combinedPatterns.delete(combinedPatterns.keys().next().value!);
    combinedPatterns.set(key, combined);
  }
  const expression = combined;
  return (path) => expression.test(path);
}

/**
 * The expressions of the pattern lists met last (by the exact list): a start compiles its rules'
 * list twice (the sandbox, the worktrees), and a start from the snapshot finds the shipped rules'
 * list compiled by the build's warm-up (src/cli/warm-compose.ts; docs/performance.md#the-start-up-snapshot).
 * The expressions have no `g` or `y` flag: `test` keeps no state, so matchers can share one.
 */
const combinedPatterns = new Map<string, RegExp>();
const COMBINED_KEPT = 8;

/**
 * `patterns` are globs relative to a scan root (`**\/.env`, `**\/*.pem`, `**\/.ssh/**`),
 * matched with dot files, case-insensitively; `limits` bound each root's scan.
 */
export function createSecretFinder(patterns: readonly string[], limits: SecretScanLimits = {}): SecretFinder {
  const isMatch = secretPathMatcher(patterns);
  const entryLimit = limits.entries ?? SECRET_SCAN_LIMIT;
  const cache = new Map<string, RootScan>();

  /** One root: secrets, `.legion/` and nested `.git` within `maxDepth` levels, outside SKIPPED names, up to the entry budget. */
  const scanRoot = (root: string, maxDepth: number, skip: string | undefined): RootScan => {
    const key = `${root}\0${maxDepth}\0${skip ?? ''}`;
    const cached = cache.get(key);
    if (cached && unchanged(cached.seen)) return cached;
    const result: RootScan = { dirs: [], files: [], gitEntries: [], seen: new Map() };
    let budget = entryLimit;
    const add = (path: string, into: string[]) => {
      try {
        into.push(realpathSync(path));
      } catch {
        // vanished meanwhile
      }
    };
    const visit = (dir: string, depth: number): void => {
      let entries;
      try {
        result.seen.set(dir, statSync(dir).mtimeMs);
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return; // gone meanwhile, or unreadable: nothing beneath to hide from this scan
      }
      // A directory shaped like a git directory (HEAD with objects/ or a commondir) is one to
      // git: a `git` run there, or below it, reads its config with no `.git` entry anywhere.
      if (looksLikeGitDir(entries)) result.gitEntries.push(dir);
      for (const entry of entries) {
        if (--budget < 0) return;
        const abs = join(dir, entry.name);
        if (abs === skip) continue;
        const rel = relative(root, abs).split(sep).join('/');
        if (entry.name === '.git') result.gitEntries.push(abs);
        if (entry.isDirectory()) {
          // `**/.ssh/**` names everything inside: the directory goes as a whole. So does every
          // `.legion/` met (another project's, one Legion used untrusted: its transcripts).
          if (entry.name === '.legion' || isMatch(`${rel}/x`)) add(abs, result.dirs);
          else if (depth < maxDepth && !SKIPPED.has(entry.name)) visit(abs, depth + 1);
        } else if (isMatch(rel)) {
          add(abs, result.files);
        }
      }
    };
    visit(root, 1);
    if (cache.size > 64) cache.clear();
    cache.set(key, result);
    return result;
  };

  return {
    find(scan) {
      const workspace = scanRoot(scan.workspaceRoot, 8, undefined);
      const roots: RootScan[] = [workspace];
      if (scan.home && !isInside(scan.home, scan.workspaceRoot)) roots.push(scanRoot(scan.home, 3, scan.workspaceRoot));
      for (let dir = dirname(scan.workspaceRoot); ; dir = dirname(dir)) {
        if (dir !== scan.home) roots.push(scanRoot(dir, 1, scan.workspaceRoot));
        if (dirname(dir) === dir) break;
      }
      return {
        dirs: [...new Set(roots.flatMap((r) => r.dirs))],
        files: [...new Set(roots.flatMap((r) => r.files))],
        nestedGit: workspace.gitEntries.filter((path) => path !== join(scan.workspaceRoot, '.git')),
      };
    },
    nestedGit(workspaceRoot) {
      return scanRoot(workspaceRoot, 8, undefined).gitEntries.filter((path) => path !== join(workspaceRoot, '.git'));
    },
  };
}

/** git's own test (setup.c is_git_directory): a HEAD, and objects/ here or through a commondir. */
function looksLikeGitDir(entries: readonly { name: string; isDirectory(): boolean }[]): boolean {
  let head = false;
  let store = false;
  for (const entry of entries) {
    if (entry.name === 'HEAD' && !entry.isDirectory()) head = true;
    else if (entry.name === 'objects' || entry.name === 'commondir') store = true;
  }
  return head && store;
}

function unchanged(seen: ReadonlyMap<string, number>): boolean {
  for (const [dir, mtime] of seen) {
    try {
      if (statSync(dir).mtimeMs !== mtime) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** Is `path` the same as or below `dir`? */
export function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && rel !== '..');
}
