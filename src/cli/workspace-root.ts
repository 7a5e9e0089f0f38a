import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { checkWorkspaceTrust, trustPlace, type WorkspaceTrust } from '../storage/workspace-trust';
import { LegionError, messageOf } from '../errors';

/**
 * The workspace folder as the real path every command works in; one that cannot be resolved is a LegionError naming it.
 * Synchronous inside: every start resolves it before its first frame, and a promised call is a round trip
 * through libuv's thread pool (docs/performance.md#start-up).
 */
export async function realWorkspaceRoot(requested: string): Promise<string> {
  try {
    return realpathSync.native(requested);
  } catch (error) {
    throw new LegionError(`${requested}: ${messageOf(error)}`);
  }
}

/** The trust state of the command's workspace (docs/workspace-trust.md), for commands that read its project layer. */
export async function workspaceTrustOf(context: { readonly workspaceRoot: string; readonly io: { readonly env: Readonly<Record<string, string | undefined>> } }): Promise<WorkspaceTrust> {
  const env = context.io.env;
  return checkWorkspaceTrust(trustPlace(context.workspaceRoot, env, env.HOME || homedir()));
}
