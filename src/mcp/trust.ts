import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { writeJsonAtomic } from '../storage/atomic';
import { filesChanged, linkedFiles, type DefinitionFiles } from './trust-files';
import { LegionError } from '../errors';
import { ONE_SHOT } from '../storage/zod-validate';
import { lazySchema } from '../storage/lazy-schema';

/**
 * Which workspace-defined MCP servers the user approved (docs/mcp.md, "Trust"). Kept in the
 * user's config directory, never in the workspace: a cloned repository could carry a
 * `.legion/` of its own, so nothing inside the checkout can vouch for itself. An approval
 * holds for one workspace, one server name, one definition (its fingerprint) and the content
 * of the workspace files that definition runs (their sha256, `trust-files.ts`): a changed
 * command, URL or argument list, or a rewritten `tools/mcp.js`, asks again. An approval
 * written before files were recorded (a bare fingerprint) vouches for no file.
 */
const approvalSchema = lazySchema(() =>
  z.union([
    z.string(),
    z.object({ definition: z.string(), files: z.record(z.string(), z.string()) }).strict(),
  ]),
);
const trustFileSchema = lazySchema(() =>
  z.object({
    version: z.literal(1),
    workspaces: z.record(z.string(), z.record(z.string(), approvalSchema())),
  }),
);
type TrustFile = z.infer<ReturnType<typeof trustFileSchema>>;

/** What a server's definition is now: its fingerprint and the workspace files it runs. */
export interface Definition {
  readonly fingerprint: string;
  readonly files: DefinitionFiles;
}

/** Trusted, or why not in one line ("tools/mcp.js changed since you trusted it"); `changed`: it was trusted once. */
export type TrustCheck = { readonly trusted: true } | { readonly trusted: false; readonly changed: boolean; readonly reason: string };

export interface TrustStore {
  readonly file: string;
  check(workspaceRoot: string, name: string, now: Definition): Promise<TrustCheck>;
  /** Rejects (LegionError) when a file of `now` has another hard link (trust-files.ts `HARD_LINKED`). */
  trust(workspaceRoot: string, name: string, now: Definition): Promise<void>;
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
    const checked = trustFileSchema().safeParse(parsed, ONE_SHOT);
    // An unreadable file trusts nothing (and is replaced by the next approval).
    return checked.success ? checked.data : { version: 1, workspaces: {} };
  };
  return {
    file,
    async check(workspaceRoot, name, now) {
      const data = await read().catch(() => null);
      const approval = data?.workspaces[workspaceRoot]?.[name];
      if (approval === undefined) return { trusted: false, changed: false, reason: 'not trusted yet' };
      const trusted = typeof approval === 'string' ? { definition: approval, files: {} } : approval;
      if (trusted.definition !== now.fingerprint) return { trusted: false, changed: true, reason: 'its definition changed since you trusted it' };
      const changed = filesChanged(trusted.files, now.files);
      return changed === null ? { trusted: true } : { trusted: false, changed: true, reason: changed };
    },
    async trust(workspaceRoot, name, now) {
      const linked = linkedFiles(now.files);
      if (linked !== null) throw new LegionError(`not trusted: ${linked}`);
      const data = await read();
      data.workspaces[workspaceRoot] = { ...(data.workspaces[workspaceRoot] ?? {}), [name]: { definition: now.fingerprint, files: { ...now.files } } };
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

/**
 * The workspace-relative files the approvals of `workspaceRoot` in the trust file `file` vouch
 * for (the scripts trusted servers or hooks run), and whether any approval exists there at all.
 * Read synchronously, per shell call, by the sandbox's list of read-only files
 * (docs/sandbox.md#trusted-files). A missing or unreadable store approves nothing, so nothing
 * it would vouch for runs either (`check` reads it the same way).
 */
export function approvedFiles(file: string, workspaceRoot: string): { readonly any: boolean; readonly files: string[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return { any: false, files: [] };
  }
  const checked = trustFileSchema().safeParse(parsed, ONE_SHOT);
  const approvals = checked.success ? checked.data.workspaces[workspaceRoot] : undefined;
  if (!approvals) return { any: false, files: [] };
  const files = Object.values(approvals).flatMap((a) => (typeof a === 'string' ? [] : Object.keys(a.files)));
  return { any: Object.keys(approvals).length > 0, files };
}
