import { readFile, truncate } from 'node:fs/promises';
import { parseJsonl } from '../../storage/jsonl';
import { zodValidator } from '../../storage/zod-validate';
import { approvalLineSchema, type ApprovalLine } from './schema';
import { ApprovalState } from './state';

/**
 * Read `approvals.jsonl` into state. Tolerance (DESIGN §4): a torn last line is dropped and
 * reported; other bad lines are reported and skipped. When the torn tail has no final newline
 * the fragment is cut off, so it is reported once and does not stay behind as a broken line
 * in the middle of the file (appendJsonl would start the next line after it). Missing file = empty state.
 */
export async function loadApprovalFile(file: string): Promise<{ state: ApprovalState; issues: string[] }> {
  const state = new ApprovalState();
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state, issues: [] };
    throw error;
  }
  const parsed = parseJsonl<ApprovalLine>(bytes.toString('utf8'), file, zodValidator(approvalLineSchema));
  const issues = parsed.issues.map((i) => i.message);
  const tornTail = bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a && parsed.issues.some((i) => i.kind === 'torn');
  if (tornTail) await truncate(file, bytes.lastIndexOf(0x0a) + 1);
  for (const line of parsed.records) {
    const problem = state.applyLine(line);
    if (problem) issues.push(`${file}: ${problem}`);
  }
  return { state, issues };
}
