import { mkdir, readFile, access, constants } from 'node:fs/promises';
import { writeJsonAtomic } from './atomic';
import { PRIVATE_DIR_MODE } from './private-mode';
import { WORKSPACE_VERSION, type Layout } from './layout';
import { LegionError } from '../errors';

export type WorkspaceCheck =
  | { ok: true; exists: boolean }
  | { ok: false; error: string };

/**
 * Check that `.legion/` (if present) was made by a version this build understands
 * and is writable. Never modifies anything.
 */
export async function checkWorkspace(layout: Layout): Promise<WorkspaceCheck> {
  let text: string;
  try {
    text = await readFile(layout.marker, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      try {
        await access(layout.legionDir);
        return { ok: true, exists: true };
      } catch {
        return { ok: true, exists: false };
      }
    }
    return { ok: false, error: `${layout.marker}: cannot read: ${(error as Error).message}` };
  }
  let version: unknown;
  try {
    version = (JSON.parse(text) as { version?: unknown }).version;
  } catch {
    return { ok: false, error: `${layout.marker}: not valid JSON (the file is damaged; restore it or delete it to re-create)` };
  }
  if (typeof version !== 'number') return { ok: false, error: `${layout.marker}: missing "version"` };
  if (version > WORKSPACE_VERSION) {
    return { ok: false, error: `${layout.legionDir} was made by a newer Legion (format ${version}; this build reads ${WORKSPACE_VERSION}): upgrade Legion` };
  }
  try {
    await access(layout.legionDir, constants.W_OK);
  } catch {
    return { ok: false, error: `${layout.legionDir} is not writable: check its permissions` };
  }
  return { ok: true, exists: true };
}

/** Create the `.legion/` skeleton (idempotent). Fails with a clear message when not writable. */
export async function ensureWorkspace(layout: Layout): Promise<void> {
  try {
    await mkdir(layout.participantsDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    await mkdir(layout.runsDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    await mkdir(layout.auditDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    await writeJsonAtomic(layout.marker, { version: WORKSPACE_VERSION, createdBy: 'legion' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
      throw new LegionError(`${layout.legionDir} is not writable (${code}): check its permissions`);
    }
    if (code === 'ENOTDIR' || code === 'EEXIST') {
      throw new LegionError(`${layout.legionDir}: a file is in the way of a folder (${code}): move it away`);
    }
    throw error;
  }
}
