import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The repository root (where package.json and scripts/build.mjs are). */
export const REPO_ROOT = join(import.meta.dirname, '..', '..');

/** The built CLI's entry point. Nothing else under dist/ is assumed (its layout may change). */
export const bundlePath = join(REPO_ROOT, 'dist', 'legion.js');

export interface EnsureBundleOptions {
  /**
   * An e2e file: under scripts/test.mjs (LEGION_TEST=1) the bundle was built before e2e files
   * ran, so an existing one is used as is (rebuilding could race other e2e files running it).
   * Integration files leave this off: the runner builds only when e2e files are selected.
   */
  readonly e2e?: boolean;
  /** When the bundle is not taken as is: `stale` (default) builds when missing or older than a source; `always` builds. */
  readonly rebuild?: 'stale' | 'always';
}

function newest(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((n) => newest(join(path, n))));
}

function builtAt(): number {
  try {
    return statSync(bundlePath).mtimeMs;
  } catch {
    return 0; // not built
  }
}

/** Make `dist/legion.js` current (see `EnsureBundleOptions`); a failed build fails the test. */
export function ensureBundle(options: EnsureBundleOptions = {}): void {
  if (options.e2e && process.env.LEGION_TEST === '1' && existsSync(bundlePath)) return;
  if ((options.rebuild ?? 'stale') === 'stale') {
    const sources = Math.max(...['src', 'components', 'bin', 'package.json'].map((p) => newest(join(REPO_ROOT, p))));
    if (builtAt() >= sources) return;
  }
  const r = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: REPO_ROOT, encoding: 'utf8' });
  assert.equal(r.status, 0, `build failed: ${r.stderr}`);
}

/** Variables that would make the app leave the faux/demo path or change its output. */
const APP_VARIABLES = [
  'ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL',
  'GEMINI_API_KEY', 'GEMINI_BASE_URL', 'LEGION_PROVIDER', 'LEGION_MODEL', 'LEGION_FAUX_SCRIPT', 'LEGION_DEBUG', 'CI', 'NO_COLOR', 'TMUX',
];

/** The test's environment for the built CLI in a terminal: TERM=xterm-256color, none of `APP_VARIABLES`, then `extra`. */
export function cleanAppEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm-256color' };
  for (const k of APP_VARIABLES) delete env[k];
  return { ...env, ...extra };
}
