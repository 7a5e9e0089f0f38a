import { readdir, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { Tool } from '../types';
import { isLegionSegment, resolveWorkspacePath } from '../path-safety';
import { errorResult, okResult, count } from '../result';
import { lazySchema } from '../../storage/lazy-schema';

/** Entries shown at most; the rest are counted in a note. */
export const FILE_LIST_MAX_ENTRIES = 1000;

const schema = lazySchema(() =>
  z.strictObject({
    path: z.string().optional().describe('Directory, relative to the workspace root. Default: the root'),
  }),
);
type Input = z.infer<ReturnType<typeof schema>>;

/**
 * `file_list`: one directory's entries, directories first (with a trailing `/`), then
 * files, each group sorted by name; symlinks as `name -> target`. `.legion` (any spelling)
 * is never shown. Capped at FILE_LIST_MAX_ENTRIES with a note.
 */
export const fileListTool: Tool<Input> = {
  name: 'file_list',
  description:
    'List the entries of a workspace directory (not recursive): directories end with "/", symlinks show their target. ' +
    'Use glob to find files recursively.',
  get schema() {
    return schema();
  },
  pathFields: ['path'],
  readOnly: true,
  keyArgument: (input) => input.path ?? '.',
  async execute(input, context) {
    const resolved = await resolveWorkspacePath(context.workspaceRoot, input.path ?? '.');
    if (!resolved.ok) return errorResult(resolved.error);
    const rel = resolved.relative;
    let entries;
    try {
      entries = await readdir(resolved.absolute, { withFileTypes: true });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR') return errorResult(`${rel} is a file, not a directory; use file_read to read it`);
      if (code === 'ENOENT') return errorResult(`${rel}: no such directory`);
      return errorResult(`${rel}: cannot list (${code ?? (error as Error).message})`);
    }
    const visible = entries.filter((e) => !isLegionSegment(e.name));
    const dirs: string[] = [];
    const others: { name: string; entry: (typeof visible)[number] }[] = [];
    for (const e of visible) {
      if (e.isDirectory()) dirs.push(e.name);
      else others.push({ name: e.name, entry: e });
    }
    const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
    dirs.sort(byName);
    others.sort((a, b) => byName(a.name, b.name));
    const shownDirs = dirs.slice(0, FILE_LIST_MAX_ENTRIES);
    const shownOthers = others.slice(0, Math.max(0, FILE_LIST_MAX_ENTRIES - shownDirs.length));
    const lines = shownDirs.map((d) => `${d}/`);
    for (const { name, entry } of shownOthers) {
      if (!entry.isSymbolicLink()) {
        lines.push(name);
        continue;
      }
      const full = join(resolved.absolute, name);
      const target = await readlink(full).catch(() => '?');
      const isDir = await stat(full).then((s) => s.isDirectory(), () => false);
      lines.push(`${name}${isDir ? '/' : ''} -> ${target}`);
    }
    const total = visible.length;
    const label = rel === '.' ? 'workspace root' : rel;
    if (total === 0) return okResult(`(${label} is empty)`, `${label}: empty`);
    const omitted = total - lines.length;
    if (omitted > 0) lines.push(`[… ${count(omitted, 'more entry', 'more entries')} not shown]`);
    return okResult(lines.join('\n'), `${label}: ${count(total, 'entry', 'entries')}`);
  },
};
