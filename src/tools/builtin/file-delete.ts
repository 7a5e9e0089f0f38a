import { lstat, rmdir, unlink } from 'node:fs/promises';
import { basename, dirname, join, normalize } from 'node:path';
import { z } from 'zod';
import type { Tool } from '../types';
import { clip, isLegionSegment, resolveWorkspacePath } from '../path-safety';
import { errorResult, okResult } from '../result';
import { pinDirectory, type PinnedDir } from '../fd-location';
import { lazySchema } from '../../storage/lazy-schema';

const schema = lazySchema(() =>
  z.strictObject({
    path: z.string().describe('File (or empty directory) to delete, relative to the workspace root'),
  }),
);
type Input = z.infer<ReturnType<typeof schema>>;

const ROOT_REFUSAL = 'refusing to delete the workspace root';

/**
 * `file_delete`: deletes one file, one symlink (the link itself, never its target; a link
 * leading outside the workspace is refused like any outward path) or one empty directory. Non-empty directories are refused (delete their files first, or use
 * shell under its rules), as is the workspace root. The parent directory's confinement is
 * checked, and checked again right before the deletion.
 */
export const fileDeleteTool: Tool<Input> = {
  name: 'file_delete',
  description:
    'Delete a file, a symlink (not its target) or an empty directory of the workspace. Non-empty directories are refused.',
  get schema() {
    return schema();
  },
  pathFields: ['path'],
  keyArgument: (input) => input.path,
  async execute(input, context) {
    const root = context.workspaceRoot;
    const whole = await resolveWorkspacePath(root, input.path);
    if (!whole.ok) return errorResult(whole.error);
    if (whole.relative === '.') return errorResult(ROOT_REFUSAL);

    const norm = normalize(input.path === '' ? '.' : input.path).replace(/(.)[\\/]+$/, '$1');
    if (norm === '.' || norm === '/') return errorResult(ROOT_REFUSAL);
    const name = basename(norm);
    if (name === '..' || name === '.') return errorResult(`path "${clip(input.path)}" is outside the workspace; refused`);
    if (isLegionSegment(name)) return errorResult(`path "${clip(input.path)}" is inside .legion/ (Legion's own state); tools may not touch it`);
    const parentInput = dirname(norm);
    const parent = await resolveWorkspacePath(root, parentInput);
    if (!parent.ok) return errorResult(parent.error);
    const entry = join(parent.absolute, name);
    const rel = parent.relative === '.' ? name : `${parent.relative}/${name}`;

    let stat;
    try {
      stat = await lstat(entry);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return errorResult(`${rel}: no such file`);
      return errorResult(`${rel}: cannot delete (${code ?? (error as Error).message})`);
    }
    // Re-check right before deleting: the parent may have been swapped for a symlink.
    const changed = () => errorResult(`path "${clip(input.path)}" changed while being deleted (a symlink appeared); refused`);
    const again = await resolveWorkspacePath(root, parentInput);
    if (!again.ok || again.absolute !== parent.absolute) return changed();
    let pinned: PinnedDir;
    try {
      pinned = await pinDirectory(parent.absolute);
    } catch {
      return changed();
    }
    const target = join(pinned.base, name);
    try {
      if (stat.isDirectory()) {
        await rmdir(target);
        return okResult(`Deleted empty directory ${rel}/`, `${rel}/: deleted`);
      }
      await unlink(target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST') {
        return errorResult(`${rel}/ is a directory that is not empty; delete its files first (file_delete removes files and empty directories only)`);
      }
      return errorResult(`${rel}: cannot delete (${code ?? (error as Error).message})`);
    } finally {
      await pinned.close();
    }
    const what = stat.isSymbolicLink() ? 'symlink' : 'file';
    return okResult(`Deleted ${what} ${rel}`, `${rel}: deleted`);
  },
};
