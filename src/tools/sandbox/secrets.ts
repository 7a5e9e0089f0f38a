import { readdirSync, realpathSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import micromatch from 'micromatch';

/** Secret paths hidden whatever the rules say: credentials of the usual tools and Legion's own config. */
export function fixedSecretDirs(home: string, xdgConfigHome?: string): string[] {
  const config = xdgConfigHome && xdgConfigHome.length > 0 ? xdgConfigHome : join(home, '.config');
  return [join(home, '.ssh'), join(home, '.aws'), join(home, '.gnupg'), join(config, 'legion')];
}

export interface SecretScan {
  readonly workspaceRoot: string;
  readonly home: string;
  /** Globs relative to a scan root (`**\/.env`, `**\/*.pem`, `**\/.ssh/**`), matched with dot files, case-insensitively. */
  readonly patterns: readonly string[];
  /** Entries looked at per root at most (default SECRET_SCAN_LIMIT). */
  readonly limit?: number;
}

export interface SecretPaths {
  readonly dirs: string[];
  readonly files: string[];
}

export const SECRET_SCAN_LIMIT = 20_000;
/** Trees never entered: large, and holding no user secrets by convention. */
const SKIPPED = new Set(['node_modules', '.git', '.legion', '.cache', '.npm', '.nvm', '.cargo', '.rustup', '.pyenv', '.local', 'dist', 'build', 'target']);

/**
 * Files and directories matching the secret patterns that a sandboxed command could
 * otherwise read: in the workspace (8 levels deep), in the home directory (3 levels), and
 * directly inside each directory above the workspace (a `.env` next to the project).
 * Every root is bounded by `limit` entries, so a huge tree costs bounded time; what lies
 * beyond the bound is not hidden (docs/sandbox.md). Paths are real paths (symlinks resolved),
 * as bubblewrap needs them.
 */
export function findSecretPaths(scan: SecretScan): SecretPaths {
  const limit = scan.limit ?? SECRET_SCAN_LIMIT;
  const matchers = scan.patterns.map((pattern) => micromatch.matcher(pattern, { dot: true, nocase: true }));
  const isMatch = (path: string) => matchers.some((m) => m(path));
  const dirs = new Set<string>();
  const files = new Set<string>();
  const add = (path: string, isDir: boolean) => {
    try {
      (isDir ? dirs : files).add(realpathSync(path));
    } catch {
      // vanished meanwhile
    }
  };
  const walk = (root: string, maxDepth: number, skip?: string) => {
    let budget = limit;
    const visit = (dir: string, depth: number) => {
      let entries;
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        if (--budget < 0) return;
        const abs = join(dir, entry.name);
        if (abs === skip) continue;
        const rel = relative(root, abs).split(sep).join('/');
        if (entry.isDirectory()) {
          // `**/.ssh/**` names everything inside: the directory goes as a whole.
          if (isMatch(`${rel}/x`)) add(abs, true);
          else if (depth < maxDepth && !SKIPPED.has(entry.name)) visit(abs, depth + 1);
        } else if (isMatch(rel)) {
          add(abs, false);
        }
      }
    };
    visit(root, 1);
  };
  walk(scan.workspaceRoot, 8);
  if (scan.home && !isInside(scan.home, scan.workspaceRoot)) walk(scan.home, 3, scan.workspaceRoot);
  for (let dir = dirname(scan.workspaceRoot); ; dir = dirname(dir)) {
    if (dir !== scan.home) walk(dir, 1, scan.workspaceRoot);
    if (dirname(dir) === dir) break;
  }
  return { dirs: [...dirs], files: [...files] };
}

/** Is `path` the same as or below `dir`? */
export function isInside(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && rel !== '..');
}
