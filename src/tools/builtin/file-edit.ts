import { z } from 'zod';
import type { Tool } from '../types';
import { resolveWorkspacePath } from '../path-safety';
import { writeFileConfined } from '../confined-write';
import { looksBinary, openCheckedForRead, BINARY_SNIFF_BYTES } from '../text-file';
import { errorResult, okResult, count } from '../result';
import { lazySchema } from '../../storage/lazy-schema';

/** Files larger than this are not loaded for editing. */
export const FILE_EDIT_MAX_BYTES = 10 * 1024 * 1024;

const schema = lazySchema(() =>
  z.strictObject({
    path: z.string().describe('File path, relative to the workspace root'),
    oldString: z.string().describe('Exact text to replace, including whitespace and indentation; must occur once unless replaceAll'),
    newString: z.string().describe('Replacement text'),
    replaceAll: z.boolean().optional().describe('Replace every occurrence instead of requiring a unique match'),
  }),
);
type Input = z.infer<ReturnType<typeof schema>>;

/** Start offsets of the non-overlapping occurrences of `needle` in `hay`. */
export function occurrences(hay: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + needle.length)) found.push(i);
  return found;
}

function lineAt(text: string, index: number): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) n += 1;
  return n;
}

function replaceAt(text: string, at: readonly number[], oldLength: number, replacement: string): string {
  const parts: string[] = [];
  let from = 0;
  for (const i of at) {
    parts.push(text.slice(from, i), replacement);
    from = i + oldLength;
  }
  parts.push(text.slice(from));
  return parts.join('');
}

function notFoundHint(text: string, oldString: string): string {
  const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
  const target = squash(oldString);
  if (target.length > 0 && squash(text).includes(target)) {
    return 'The text exists with different whitespace or indentation: read the file with file_read and copy it exactly (without the line-number prefix).';
  }
  const firstLine = oldString.split('\n').find((l) => l.trim().length > 0)?.trim();
  if (firstLine && text.includes(firstLine)) {
    return `Its first line occurs (line ${lineAt(text, text.indexOf(firstLine))}) but the rest differs: read the file with file_read and copy the exact text.`;
  }
  return 'Read the file with file_read and copy the exact text to replace (without the line-number prefix).';
}

/**
 * `file_edit`: exact string replacement. Refuses an ambiguous match (unless `replaceAll`),
 * a missing one (with a hint), and a no-op. A file with CRLF line ends is matched with
 * `\n` in the strings converted to `\r\n`. The result is written atomically.
 */
export const fileEditTool: Tool<Input> = {
  name: 'file_edit',
  description:
    'Replace exact text in a file. oldString must match the file exactly (whitespace included) and occur exactly once, ' +
    'unless replaceAll is true. Read the file first; include enough surrounding lines to make the match unique.',
  get schema() {
    return schema();
  },
  pathFields: ['path'],
  keyArgument: (input) => input.path,
  async execute(input, context) {
    if (input.oldString.length === 0) return errorResult('oldString is empty: give the exact text to replace (use file_write to create a file)');
    if (input.oldString === input.newString) return errorResult('oldString and newString are identical: nothing to change');
    const resolved = await resolveWorkspacePath(context.workspaceRoot, input.path);
    if (!resolved.ok) return errorResult(resolved.error);
    const rel = resolved.relative;

    let bytes: Buffer;
    try {
      const handle = await openCheckedForRead(resolved.absolute);
      try {
        const stat = await handle.stat();
        if (stat.isDirectory()) return errorResult(`${rel} is a directory`);
        if (!stat.isFile()) return errorResult(`${rel} is not a regular file`);
        if (stat.size > FILE_EDIT_MAX_BYTES) {
          return errorResult(`${rel} is too large to edit (${stat.size} bytes; at most ${FILE_EDIT_MAX_BYTES})`);
        }
        bytes = await handle.readFile();
      } finally {
        await handle.close();
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return errorResult(`${rel}: no such file (use file_write to create it)`);
      if (code === 'ELOOP' || code === 'ESWAPPED') return errorResult(`${rel} changed while being opened (a symlink appeared); refused`);
      return errorResult(`${rel}: cannot read (${code ?? (error as Error).message})`);
    }
    if (looksBinary(bytes.subarray(0, BINARY_SNIFF_BYTES))) return errorResult(`${rel} is a binary file; file_edit edits text files only`);
    const text = bytes.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(bytes)) {
      return errorResult(`${rel} is not valid UTF-8; file_edit would corrupt it (rewrite it with file_write if intended)`);
    }

    let oldString = input.oldString;
    let newString = input.newString;
    let at = occurrences(text, oldString);
    if (at.length === 0 && text.includes('\r\n') && oldString.includes('\n')) {
      const crlf = (s: string) => s.replace(/\r?\n/g, '\r\n');
      const converted = occurrences(text, crlf(oldString));
      if (converted.length > 0) {
        oldString = crlf(oldString);
        newString = crlf(newString);
        at = converted;
      }
    }
    if (at.length === 0) return errorResult(`oldString was not found in ${rel}. ${notFoundHint(text, input.oldString)}`);
    if (at.length > 1 && input.replaceAll !== true) {
      const lines = at.slice(0, 10).map((i) => lineAt(text, i));
      const more = at.length > 10 ? ', …' : '';
      return errorResult(
        `oldString matches ${at.length} times in ${rel} (lines ${lines.join(', ')}${more}); ` +
          'include more surrounding text to make it unique, or set replaceAll: true to replace every occurrence',
      );
    }

    const updated = replaceAt(text, at, oldString.length, newString);
    const written = await writeFileConfined(context.workspaceRoot, input.path, updated);
    if (!written.ok) return errorResult(written.error);
    const firstLine = lineAt(text, at[0]!);
    const where = at.length === 1 ? `line ${firstLine}` : `first at line ${firstLine}`;
    return okResult(
      `Replaced ${count(at.length, 'occurrence')} in ${rel} (${where})`,
      `${rel}: ${count(at.length, 'replacement')} (${where})`,
    );
  },
};
