import { realpath } from 'node:fs/promises';
import { LegionError, messageOf } from '../errors';

/** The workspace folder as the real path every command works in; one that cannot be resolved is a LegionError naming it. */
export async function realWorkspaceRoot(requested: string): Promise<string> {
  try {
    return await realpath(requested);
  } catch (error) {
    throw new LegionError(`${requested}: ${messageOf(error)}`);
  }
}
