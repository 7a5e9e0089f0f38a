import { readFile, truncate } from 'node:fs/promises';
import { parseJsonl } from '../../storage/jsonl';
import { zodValidator } from '../../storage/zod-validate';
import { approvalLineSchema, type ApprovalLine } from './schema';
import { ApprovalState, type ApprovalRequest } from './state';
import { surelyAbsent } from '../../storage/absent';

/**
 * Read `approvals.jsonl` into state. Tolerance (docs/design.md#files-on-disk): a torn last line is dropped and
 * reported; other bad lines are reported and skipped. When the torn tail has no final newline
 * the fragment is cut off, so it is reported once and does not stay behind as a broken line
 * in the middle of the file (appendJsonl would start the next line after it). Missing file = empty state.
 * `readOnly` writes nothing (the torn fragment stays; the queue's own `load` cuts it later).
 */
export async function loadApprovalFile(file: string, options: { readonly readOnly?: boolean } = {}): Promise<{ state: ApprovalState; issues: string[] }> {
  const state = new ApprovalState();
  if (surelyAbsent(file)) return { state, issues: [] };
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state, issues: [] };
    throw error;
  }
  const parsed = parseJsonl<ApprovalLine>(bytes.toString('utf8'), file, zodValidator(approvalLineSchema()));
  const issues = parsed.issues.map((i) => i.message);
  const tornTail = bytes.length > 0 && bytes[bytes.length - 1] !== 0x0a && parsed.issues.some((i) => i.kind === 'torn');
  if (tornTail && !options.readOnly) await truncate(file, bytes.lastIndexOf(0x0a) + 1);
  for (const line of parsed.records) {
    const problem = state.applyLine(line);
    if (problem) issues.push(`${file}: ${problem}`);
  }
  return { state, issues };
}

/**
 * The requests pending in `approvals.jsonl`, read without writing anything (the composition
 * root asks before loading the run which sessions the core will resume; the queue's `load`
 * reads the file again and reports its problems). Missing or unreadable file = none.
 */
export async function readPendingApprovals(file: string): Promise<ApprovalRequest[]> {
  try {
    return (await loadApprovalFile(file, { readOnly: true })).state.pending();
  } catch {
    return [];
  }
}
