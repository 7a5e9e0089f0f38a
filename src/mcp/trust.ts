import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeJsonAtomic } from '../storage/atomic';

/**
 * Which workspace-defined MCP servers the user approved (docs/mcp.md, "Trust"). Kept in the
 * user's config directory, never in the workspace: a cloned repository could carry a
 * `.legion/` of its own, so nothing inside the checkout can vouch for itself. An approval
 * holds for one workspace, one server name and one definition (its fingerprint): a changed
 * command, URL or argument list asks again.
 */
const trustFileSchema = z.object({
  version: z.literal(1),
  workspaces: z.record(z.string(), z.record(z.string(), z.string())),
});
type TrustFile = z.infer<typeof trustFileSchema>;

export interface TrustStore {
  readonly file: string;
  isTrusted(workspaceRoot: string, name: string, fingerprint: string): Promise<boolean>;
  trust(workspaceRoot: string, name: string, fingerprint: string): Promise<void>;
  /** True when something was removed. */
  revoke(workspaceRoot: string, name: string): Promise<boolean>;
}

export function trustFilePath(env: Readonly<Record<string, string | undefined>>, home: string): string {
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'legion', 'mcp-trust.json');
}

export function createTrustStore(file: string): TrustStore {
  const read = async (): Promise<TrustFile> => {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, workspaces: {} };
      throw error;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
    const checked = trustFileSchema.safeParse(parsed);
    // An unreadable file trusts nothing (and is replaced by the next approval).
    return checked.success ? checked.data : { version: 1, workspaces: {} };
  };
  return {
    file,
    async isTrusted(workspaceRoot, name, fingerprint) {
      const data = await read().catch(() => null);
      return data?.workspaces[workspaceRoot]?.[name] === fingerprint;
    },
    async trust(workspaceRoot, name, fingerprint) {
      const data = await read();
      data.workspaces[workspaceRoot] = { ...(data.workspaces[workspaceRoot] ?? {}), [name]: fingerprint };
      await writeJsonAtomic(file, data);
    },
    async revoke(workspaceRoot, name) {
      const data = await read();
      const servers = data.workspaces[workspaceRoot];
      if (!servers || !(name in servers)) return false;
      delete servers[name];
      await writeJsonAtomic(file, data);
      return true;
    },
  };
}
