import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Ignore } from 'ignore';
import { isLegionSegment } from './path-safety';

/** Directory names never searched or listed by glob/grep, whatever .gitignore says. */
export const ALWAYS_SKIPPED_DIRS: readonly string[] = ['.git', 'node_modules'];

const MAX_IGNORE_FILE_BYTES = 1024 * 1024;

/**
 * `.gitignore` semantics for search tools: every `.gitignore` from the workspace root down
 * to an entry's directory applies, the deepest with an opinion wins (so `!negations` in a
 * subdirectory work), a path under an ignored directory is ignored, and
 * `.git/info/exclude` applies like a root-level `.gitignore` of lower precedence.
 * `.git`, `node_modules` and `.legion` (any spelling) are always skipped.
 * Paths are workspace-relative with `/` separators.
 */
export interface IgnoreFilter {
  ignores(relative: string, isDir: boolean): Promise<boolean>;
}

export function isAlwaysSkipped(name: string): boolean {
  return ALWAYS_SKIPPED_DIRS.includes(name) || isLegionSegment(name);
}

export function createIgnoreFilter(root: string): IgnoreFilter {
  const rules = new Map<string, Promise<Ignore | undefined>>();
  const dirVerdicts = new Map<string, Promise<boolean>>();

  const readRules = async (file: string): Promise<string | undefined> => {
    try {
      const text = await readFile(file, 'utf8');
      return text.length > MAX_IGNORE_FILE_BYTES ? text.slice(0, MAX_IGNORE_FILE_BYTES) : text;
    } catch {
      return undefined;
    }
  };

  const load = (dir: string): Promise<Ignore | undefined> => {
    let cached = rules.get(dir);
    if (!cached) {
      cached = (async () => {
        const own = await readRules(join(root, dir, '.gitignore'));
        const exclude = dir === '' ? await readRules(join(root, '.git', 'info', 'exclude')) : undefined;
        if (own === undefined && exclude === undefined) return undefined;
        const { default: ignore } = await import('ignore');
        const ig = ignore({ ignorecase: false });
        if (exclude !== undefined) ig.add(exclude);
        if (own !== undefined) ig.add(own);
        return ig;
      })();
      rules.set(dir, cached);
    }
    return cached;
  };

  const verdict = async (rel: string, isDir: boolean): Promise<boolean> => {
    const segments = rel.split('/');
    for (let i = segments.length - 1; i >= 0; i -= 1) {
      const dir = segments.slice(0, i).join('/');
      const ig = await load(dir);
      if (!ig) continue;
      const sub = segments.slice(i).join('/');
      try {
        const result = ig.test(isDir ? `${sub}/` : sub);
        if (result.ignored) return true;
        if (result.unignored) return false;
      } catch {
        // a name `ignore` cannot parse: no opinion
      }
    }
    return false;
  };

  const dirIgnored = (rel: string): Promise<boolean> => {
    let cached = dirVerdicts.get(rel);
    if (!cached) {
      cached = (async () => {
        const name = rel.slice(rel.lastIndexOf('/') + 1);
        if (isAlwaysSkipped(name)) return true;
        const slash = rel.lastIndexOf('/');
        if (slash > 0 && (await dirIgnored(rel.slice(0, slash)))) return true;
        return verdict(rel, true);
      })();
      dirVerdicts.set(rel, cached);
    }
    return cached;
  };

  return {
    async ignores(relative, isDir) {
      if (relative === '.' || relative === '') return false;
      if (isDir) return dirIgnored(relative);
      const slash = relative.lastIndexOf('/');
      if (slash > 0 && (await dirIgnored(relative.slice(0, slash)))) return true;
      if (isLegionSegment(relative.slice(slash + 1))) return true;
      return verdict(relative, false);
    },
  };
}
