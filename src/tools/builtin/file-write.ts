import { z } from 'zod';
import type { Tool } from '../types';
import { writeFileConfined } from '../confined-write';
import { errorResult, okResult, count } from '../result';
import { lazySchema } from '../../storage/lazy-schema';

const schema = lazySchema(() =>
  z.strictObject({
    path: z.string().describe('File path, relative to the workspace root'),
    content: z.string().describe('The complete new content of the file'),
  }),
);
type Input = z.infer<ReturnType<typeof schema>>;

/** Lines of a text as an editor counts them ("" → 0, "a" → 1, "a\n" → 1, "a\nb" → 2). */
export function lineCount(text: string): number {
  if (text.length === 0) return 0;
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n += 1;
  return text.endsWith('\n') ? n : n + 1;
}

/**
 * `file_write`: create or replace a whole file. Parent directories are created; the write
 * is atomic (temp file + rename) and confinement is re-checked right before it.
 */
export const fileWriteTool: Tool<Input> = {
  name: 'file_write',
  description:
    'Create a file or replace its whole content. Parent directories are created. ' +
    'Prefer file_edit to change part of an existing file.',
  get schema() {
    return schema();
  },
  pathFields: ['path'],
  keyArgument: (input) => input.path,
  async execute(input, context) {
    const written = await writeFileConfined(context.workspaceRoot, input.path, input.content);
    if (!written.ok) return errorResult(written.error);
    const what = `${count(written.bytes, 'byte')}, ${count(lineCount(input.content), 'line')}`;
    const verb = written.created ? 'Created' : 'Overwrote';
    return okResult(`${verb} ${written.relative} (${what})`, `${written.relative}: ${verb.toLowerCase()} (${what})`);
  },
};
