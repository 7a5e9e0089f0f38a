import { join } from 'node:path';
import { approvedFiles } from '../mcp/trust';
import { mcpJsonPath } from '../mcp/servers';

/**
 * What the shell sandbox binds read-only because something runs it unsandboxed once trusted
 * (docs/sandbox.md#trusted-files): the workspace files the user's approvals of trusted MCP
 * servers and hooks vouch for (their scripts, recorded by `legion mcp trust` / `legion hooks
 * trust`), and the files that define them (`.mcp.json`, `.claude/settings.json`,
 * `.claude/settings.local.json`) while any approval exists. Read from the trust stores on each
 * call, so an approval given during the run protects the next call. Absolute paths; the
 * sandbox keeps those that exist inside the tree it makes writable.
 */
export function trustedRunFiles(options: {
  readonly workspaceRoot: string;
  /** The MCP trust store (`trustFilePath`) and the hooks' (`hooksTrustFile`). */
  readonly mcpTrustFile: string;
  readonly hooksTrustFile: string;
}): () => string[] {
  const root = options.workspaceRoot;
  return () => {
    const mcp = approvedFiles(options.mcpTrustFile, root);
    const hooks = approvedFiles(options.hooksTrustFile, root);
    const out = [...mcp.files, ...hooks.files].map((rel) => join(root, rel));
    if (mcp.any) out.push(mcpJsonPath(root));
    if (hooks.any) out.push(join(root, '.claude', 'settings.json'), join(root, '.claude', 'settings.local.json'));
    return out;
  };
}
