import { z } from 'zod';
import type { Tool } from '../types';
import { resolveWorkspacePath } from '../path-safety';
import { isBinaryHandle, openCheckedForRead, scanLines } from '../text-file';
import { errorResult, okResult, count } from '../result';
import { lazySchema } from '../../storage/lazy-schema';

/** Lines returned when `limit` is not given. */
export const FILE_READ_DEFAULT_LINES = 2000;
/** Characters of one line shown; longer lines are cut with a marker. */
export const FILE_READ_MAX_LINE_CHARS = 2000;

const schema = lazySchema(() =>
  z.strictObject({
    path: z.string().describe('File path, relative to the workspace root'),
    offset: z.number().int().min(1).optional().describe('First line to read (1-based). Default 1'),
    limit: z.number().int().min(1).optional().describe(`Number of lines to read. Default ${FILE_READ_DEFAULT_LINES}`),
  }),
);
type Input = z.infer<ReturnType<typeof schema>>;

function numbered(lineNo: number, text: string): string {
  return `${String(lineNo).padStart(6, ' ')}\t${text}`;
}

/**
 * `file_read`: text with line numbers (`cat -n` style). Streams the file, so a huge file
 * costs only the lines returned. Stops at `limit` lines or the context's output limit,
 * whichever comes first, with a note giving the `offset` to continue from. Binary files
 * (a NUL byte in the first 8 KiB) are refused.
 */
export const fileReadTool: Tool<Input> = {
  name: 'file_read',
  description:
    'Read a text file of the workspace. Returns lines prefixed with their line number (cat -n style). ' +
    `Reads ${FILE_READ_DEFAULT_LINES} lines by default; use offset and limit (in lines) for large files. ` +
    `Lines longer than ${FILE_READ_MAX_LINE_CHARS} characters are cut. Binary files are refused.`,
  get schema() {
    return schema();
  },
  pathFields: ['path'],
  readOnly: true,
  keyArgument: (input) => input.path,
  async execute(input, context) {
    const resolved = await resolveWorkspacePath(context.workspaceRoot, input.path);
    if (!resolved.ok) return errorResult(resolved.error);
    const rel = resolved.relative;
    let handle;
    try {
      handle = await openCheckedForRead(resolved.absolute);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP' || code === 'ESWAPPED') return errorResult(`${rel} changed while being opened (a symlink appeared); refused`);
      if (code === 'ENOENT') return errorResult(`${rel}: no such file. Use file_list or glob to find the right path.`);
      return errorResult(`${rel}: cannot open (${code ?? (error as Error).message})`);
    }
    try {
      const stat = await handle.stat();
      if (stat.isDirectory()) return errorResult(`${rel} is a directory; use file_list to see its entries`);
      if (!stat.isFile()) return errorResult(`${rel} is not a regular file`);
      if (stat.size === 0) return okResult(`(${rel} is empty)`, `${rel}: empty`);
      if (await isBinaryHandle(handle)) {
        return errorResult(`${rel} is a binary file (${stat.size} bytes); file_read reads text files only`);
      }

      const offset = input.offset ?? 1;
      const limit = input.limit ?? FILE_READ_DEFAULT_LINES;
      const last = offset + limit - 1;
      const budget = Math.max(200, context.limits.toolOutputLimit - 200);
      const out: string[] = [];
      let used = 0;
      let lastShown = offset - 1;
      let moreAfter = false;
      let budgetHit = false;
      let cutLines = 0;

      const scan = await scanLines(handle, {
        maxLineBytes: FILE_READ_MAX_LINE_CHARS * 4,
        signal: context.signal,
        want: (n) => n >= offset && n <= last + 1,
        onLine: (n, text, cut) => {
          if (n > last) {
            moreAfter = true;
            return false;
          }
          let shown = text;
          if (cut || shown.length > FILE_READ_MAX_LINE_CHARS) {
            shown = `${shown.slice(0, FILE_READ_MAX_LINE_CHARS)}… (line cut at ${FILE_READ_MAX_LINE_CHARS} characters)`;
            cutLines += 1;
          }
          const line = numbered(n, shown);
          if (used + line.length + 1 > budget && out.length > 0) {
            budgetHit = true;
            moreAfter = true;
            return false;
          }
          out.push(line);
          used += line.length + 1;
          lastShown = n;
          return true;
        },
      });
      if (scan.aborted) return errorResult(`file_read of ${rel} interrupted`);
      if (out.length === 0) {
        return errorResult(`${rel} has ${count(scan.lines, 'line')}; offset ${offset} is past the end`);
      }

      const notes: string[] = [];
      if (budgetHit) {
        notes.push(`[output limit reached after line ${lastShown}; continue with offset=${lastShown + 1}]`);
      } else if (moreAfter) {
        notes.push(`[showing ${lastShown === offset ? `line ${offset}` : `lines ${offset}-${lastShown}`} of ${rel} (${stat.size} bytes); more follows: continue with offset=${lastShown + 1}]`);
      }
      if (cutLines > 0) notes.push(`[${count(cutLines, 'line')} cut at ${FILE_READ_MAX_LINE_CHARS} characters]`);
      const body = out.join('\n') + (notes.length > 0 ? `\n${notes.join('\n')}` : '');
      const range = lastShown === offset ? `line ${offset}` : `lines ${offset}-${lastShown}`;
      return okResult(body, `${rel}: ${range}${moreAfter ? ' (more follows)' : ''}`);
    } finally {
      await handle.close();
    }
  },
};
