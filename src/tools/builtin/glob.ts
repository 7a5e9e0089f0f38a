import { relative, resolve, isAbsolute, sep } from 'node:path';
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import type { Tool } from '../types';
import { isUnderLegionDir, resolveWorkspacePath, rootOf } from '../path-safety';
import { createIgnoreFilter } from '../gitignore';
import { globPatternProblem } from '../pattern-safety';
import { errorResult, okResult, count } from '../result';
import { lazySchema } from '../../storage/lazy-schema';

/** Paths returned at most; the rest are counted in a note. */
export const GLOB_MAX_RESULTS = 1000;

const schema = lazySchema(() =>
  z.strictObject({
    pattern: z.string().describe('Glob pattern, e.g. "**/*.ts" or "src/**/test-*.{js,ts}"'),
    path: z.string().optional().describe('Directory to search in, relative to the workspace root. Default: the root'),
  }),
);
type Input = z.infer<ReturnType<typeof schema>>;

/**
 * `glob`: files matching a pattern (tinyglobby), relative to the workspace root, sorted.
 * Dotfiles match; `.git`, `node_modules`, `.legion` and `.gitignore`d files never do.
 * Symlinked directories are not followed. Patterns cannot be absolute or contain `..`.
 */
export const globTool: Tool<Input> = {
  name: 'glob',
  description:
    'Find files by glob pattern (e.g. "**/*.ts"). Returns workspace-relative paths, sorted. ' +
    'Skips .git, node_modules and .gitignore\'d files.',
  get schema() {
    return schema();
  },
  pathFields: ['path'],
  readOnly: true,
  keyArgument: (input) => (input.path ? `${input.pattern} in ${input.path}` : input.pattern),
  async execute(input, context) {
    const problem = globPatternProblem(input.pattern);
    if (problem) return errorResult(problem);
    const resolved = await resolveWorkspacePath(context.workspaceRoot, input.path ?? '.');
    if (!resolved.ok) return errorResult(resolved.error);
    const isDir = await stat(resolved.absolute).then((s) => s.isDirectory(), () => undefined);
    if (isDir === undefined) return errorResult(`${resolved.relative}: no such directory`);
    if (!isDir) return errorResult(`${resolved.relative} is a file, not a directory; path must be a directory to search in`);

    let found: string[];
    try {
      const { glob: tinyglob } = await import('tinyglobby');
      found = await tinyglob(input.pattern, {
        cwd: resolved.absolute,
        dot: true,
        onlyFiles: true,
        followSymbolicLinks: false,
        expandDirectories: false,
        ignore: ['**/node_modules/**', '**/.git/**', '**/.legion/**'],
        signal: context.signal,
      });
    } catch (error) {
      if (context.signal.aborted) return errorResult('glob interrupted');
      return errorResult(`glob failed: ${(error as Error).message}`);
    }

    const filter = createIgnoreFilter(rootOf(resolved.absolute, resolved.relative));
    const kept: string[] = [];
    for (const entry of found) {
      const inside = relative(resolved.absolute, resolve(resolved.absolute, entry));
      if (inside === '' || inside === '..' || inside.startsWith('..' + sep) || isAbsolute(inside)) continue;
      const insidePosix = sep === '/' ? inside : inside.split(sep).join('/');
      const posix = resolved.relative === '.' ? insidePosix : `${resolved.relative}/${insidePosix}`;
      if (isUnderLegionDir(posix)) continue;
      if (await filter.ignores(posix, false)) continue;
      kept.push(posix);
    }
    kept.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const where = resolved.relative === '.' ? 'the workspace' : resolved.relative;
    if (kept.length === 0) return okResult(`No files match ${input.pattern} in ${where}`, `${input.pattern}: no files`);
    const shown = kept.slice(0, GLOB_MAX_RESULTS);
    const lines = [...shown];
    if (kept.length > shown.length) {
      lines.push(`[… ${kept.length - shown.length} more not shown (${kept.length} in all); use a narrower pattern or path]`);
    }
    return okResult(lines.join('\n'), `${input.pattern}: ${count(kept.length, 'file')}`);
  },
};
