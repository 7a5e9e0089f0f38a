import { createTwoFilesPatch } from 'diff';
import { resolveWorkspacePath } from '../../tools/path-safety';
import { looksBinary, openForRead, BINARY_SNIFF_BYTES } from '../../tools/text-file';
import { occurrences } from '../../tools/builtin/file-edit';
import { readFile } from 'node:fs/promises';
import { layoutFor } from '../../storage/layout';
import { MERGE_TOOL } from './merge-input';

/**
 * What an approval would do, for the approval queue's details view (docs/design.md#the-tui):
 * - `file_write` / `file_edit`: a unified diff of the file on disk now against the file the
 *   call would leave (`--- a/<path>` / `+++ b/<path>`, 3 lines of context). A new file diffs
 *   against `/dev/null`.
 * - `shell`: the full command (and the timeout when given).
 * - `merge`: the diff of an isolated session's work (docs/worktrees.md), or its conflicting hunks.
 * - anything else, or a call that cannot be previewed: the input as indented JSON, headed by
 *   a one-line reason when a preview was attempted and failed (path refused, oldString not
 *   found, binary file, too large).
 * Reads only, confined to the workspace with `resolveWorkspacePath`; never throws.
 */
export type ApprovalPreview =
  | { readonly kind: 'diff'; readonly text: string }
  | { readonly kind: 'command'; readonly text: string }
  | { readonly kind: 'json'; readonly text: string };

/** Files larger than this are not diffed (the preview says so). */
export const PREVIEW_MAX_BYTES = 1024 * 1024;
/** Time budget of one diff; the UI waits for it. */
const DIFF_TIMEOUT_MS = 300;

export async function previewApproval(workspaceRoot: string, toolName: string, input: unknown): Promise<ApprovalPreview> {
  try {
    switch (toolName) {
      case 'file_write':
        return await previewWrite(workspaceRoot, input);
      case 'file_edit':
        return await previewEdit(workspaceRoot, input);
      case 'shell':
        return previewShell(input);
      case MERGE_TOOL:
        return await previewMerge(workspaceRoot, input);
      default:
        return json(input);
    }
  } catch (error) {
    return json(input, `no preview: ${(error as Error).message}`);
  }
}

/** A merge request's diff (or, in conflict, its conflicting hunks), kept beside the worktree when it was raised. */
async function previewMerge(root: string, input: unknown): Promise<ApprovalPreview> {
  const session = str(input, 'session');
  if (session === undefined || !/^[A-Za-z0-9._-]+$/.test(session)) return json(input, 'no preview: the merge request names no session');
  const diffstat = str(input, 'diffstat') ?? '';
  try {
    const text = await readFile(layoutFor(root).worktreeDiff(session), 'utf8');
    return { kind: 'diff', text: `${diffstat}\n${text}`.replace(/\n$/, '') };
  } catch (error) {
    return json(input, `no preview: the diff of ${session} is gone (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
}

function json(input: unknown, note?: string): ApprovalPreview {
  let body: string;
  try {
    body = JSON.stringify(input, null, 2) ?? String(input);
  } catch {
    body = String(input);
  }
  return { kind: 'json', text: note ? `${note}\n${body}` : body };
}

function str(input: unknown, field: string): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const value = (input as Record<string, unknown>)[field];
  return typeof value === 'string' ? value : undefined;
}

function previewShell(input: unknown): ApprovalPreview {
  const command = str(input, 'command');
  if (command === undefined) return json(input, 'no preview: the input has no command');
  const timeout = typeof input === 'object' && input !== null ? (input as { timeoutMs?: unknown }).timeoutMs : undefined;
  const suffix = typeof timeout === 'number' ? `\n(timeout ${timeout} ms)` : '';
  return { kind: 'command', text: `$ ${command}${suffix}` };
}

type Current = { ok: true; relative: string; text: string | null } | { ok: false; error: string };

/** The file's text now (null: it does not exist), after workspace confinement. */
async function readCurrent(root: string, path: string): Promise<Current> {
  const resolved = await resolveWorkspacePath(root, path);
  if (!resolved.ok) return { ok: false, error: resolved.error };
  const rel = resolved.relative;
  let bytes: Buffer;
  try {
    const handle = await openForRead(resolved.absolute);
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) return { ok: false, error: `${rel} is not a regular file` };
      if (stat.size > PREVIEW_MAX_BYTES) return { ok: false, error: `${rel} is too large to diff (${stat.size} bytes)` };
      bytes = await handle.readFile();
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: true, relative: rel, text: null };
    return { ok: false, error: `${rel}: cannot read (${code ?? (error as Error).message})` };
  }
  if (looksBinary(bytes.subarray(0, BINARY_SNIFF_BYTES))) return { ok: false, error: `${rel} is a binary file` };
  return { ok: true, relative: rel, text: bytes.toString('utf8') };
}

function unified(rel: string, before: string | null, after: string): string | null {
  const patch = createTwoFilesPatch(
    before === null ? '/dev/null' : `a/${rel}`, `b/${rel}`, before ?? '', after, undefined, undefined,
    { context: 3, timeout: DIFF_TIMEOUT_MS },
  );
  if (patch === undefined) return null;
  // Drop the "Index:"/"====" banner the library prints: a plain unified diff starts at "---".
  const start = patch.indexOf('--- ');
  return (start === -1 ? patch : patch.slice(start)).replace(/\n$/, '');
}

async function previewWrite(root: string, input: unknown): Promise<ApprovalPreview> {
  const path = str(input, 'path');
  const content = str(input, 'content');
  if (path === undefined || content === undefined) return json(input, 'no preview: file_write needs path and content');
  if (Buffer.byteLength(content) > PREVIEW_MAX_BYTES) return json(input, `no preview: the new content is too large to diff`);
  const current = await readCurrent(root, path);
  if (!current.ok) return json(input, `no preview: ${current.error}`);
  if (current.text === content) return { kind: 'diff', text: `${current.relative}: no change (the file already has this content)` };
  const text = unified(current.relative, current.text, content);
  if (text === null) return json(input, 'no preview: the diff took too long to compute');
  return { kind: 'diff', text };
}

async function previewEdit(root: string, input: unknown): Promise<ApprovalPreview> {
  const path = str(input, 'path');
  const oldIn = str(input, 'oldString');
  const newIn = str(input, 'newString');
  if (path === undefined || oldIn === undefined || newIn === undefined || oldIn === '') {
    return json(input, 'no preview: file_edit needs path, oldString and newString');
  }
  const current = await readCurrent(root, path);
  if (!current.ok) return json(input, `no preview: ${current.error}`);
  if (current.text === null) return json(input, `no preview: ${current.relative} does not exist (the edit will fail)`);
  const text = current.text;
  // Same matching as the tool: exact, else with \n taken as \r\n in a CRLF file.
  let oldString = oldIn;
  let newString = newIn;
  let at = occurrences(text, oldString);
  if (at.length === 0 && text.includes('\r\n') && oldString.includes('\n')) {
    const crlf = (s: string): string => s.replace(/\r?\n/g, '\r\n');
    const converted = occurrences(text, crlf(oldString));
    if (converted.length > 0) { oldString = crlf(oldString); newString = crlf(newString); at = converted; }
  }
  if (at.length === 0) return json(input, `no preview: oldString was not found in ${current.relative} (the edit will fail)`);
  const replaceAll = typeof input === 'object' && input !== null && (input as { replaceAll?: unknown }).replaceAll === true;
  if (at.length > 1 && !replaceAll) {
    return json(input, `no preview: oldString matches ${at.length} times in ${current.relative} (the edit will fail without replaceAll)`);
  }
  const parts: string[] = [];
  let from = 0;
  for (const i of at) { parts.push(text.slice(from, i), newString); from = i + oldString.length; }
  parts.push(text.slice(from));
  const diff = unified(current.relative, text, parts.join(''));
  if (diff === null) return json(input, 'no preview: the diff took too long to compute');
  return { kind: 'diff', text: diff };
}
