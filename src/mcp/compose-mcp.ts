import { homedir } from 'node:os';
import type { LegionConfig } from '../config/schema';
import type { Layout } from '../storage/layout';
import { mcpJsonPath, planServers, projectLayerServerNames, readMcpJson, type McpServerSpec } from './servers';
import { createTrustStore, trustFilePath, type Definition, type TrustCheck, type TrustStore } from './trust';
import { definitionFiles } from './trust-files';

/** The workspace's MCP servers, before anything starts: what to start, what waits for trust. */
export interface McpSetup {
  readonly servers: readonly McpServerSpec[];
  /** Workspace-defined servers whose current definition the user has not approved. */
  readonly untrusted: ReadonlySet<string>;
  /** Why each untrusted server is: never trusted, or trusted once and changed ("tools/mcp.js changed since you trusted it"). */
  readonly untrustedReasons: ReadonlyMap<string, Untrusted>;
  readonly disabled: readonly string[];
  readonly warnings: string[];
  readonly trust: TrustStore;
  /** The server's definition now: its fingerprint and the hashes of the workspace files it runs (what `trust` records). */
  definitionOf(spec: McpServerSpec): Promise<Definition>;
  /**
   * Checked again before every start and restart of a server: null when it may start (a server
   * of the user's own config, or a workspace server whose approval still matches), else why not.
   * A file rewritten after Legion started stops the next (re)start, not only the next session.
   */
  verify(spec: McpServerSpec): Promise<string | null>;
}

/**
 * Read `.mcp.json`, merge it under the config's `mcpServers`, and check trust: a server the
 * workspace defines (`.mcp.json` or `.legion/config.yaml`) starts only once approved with
 * `legion mcp trust <name>` (docs/mcp.md). Never throws for a bad `.mcp.json`: warnings.
 */
export async function setupMcp(options: {
  readonly config: LegionConfig;
  readonly layout: Layout;
  readonly env: Readonly<Record<string, string | undefined>>;
}): Promise<McpSetup> {
  const { config, layout, env } = options;
  const file = mcpJsonPath(layout.root);
  const mcpJson = await readMcpJson(file);
  const hasAny = Object.keys(mcpJson.entries).length > 0 || Object.keys(config.mcpServers).length > 0;
  const trust = createTrustStore(trustFilePath(env, env.HOME || homedir()));
  const definitionOf = async (spec: McpServerSpec): Promise<Definition> =>
    ({ fingerprint: spec.fingerprint, files: await definitionFiles(spec.transport, layout.root, env) });
  const verify = async (spec: McpServerSpec): Promise<string | null> => {
    if (!spec.fromWorkspace) return null;
    const checked = await trust.check(layout.root, spec.name, await definitionOf(spec));
    return checked.trusted ? null : untrustedLine(spec.name, checked);
  };
  const base = { trust, definitionOf, verify };
  if (!hasAny) return { servers: [], untrusted: new Set(), untrustedReasons: new Map(), disabled: [], warnings: mcpJson.warnings, ...base };
  const plan = planServers({
    fromConfig: config.mcpServers,
    fromMcpJson: mcpJson.entries,
    projectNames: await projectLayerServerNames(layout.config),
    env,
    workspaceRoot: layout.root,
    mcpJsonFile: file,
  });
  const untrustedReasons = new Map<string, Untrusted>();
  const warnings = [...mcpJson.warnings, ...plan.warnings];
  const neverTrusted: string[] = [];
  for (const spec of plan.servers) {
    if (!spec.fromWorkspace) continue;
    const checked = await trust.check(layout.root, spec.name, await definitionOf(spec));
    if (checked.trusted) continue;
    untrustedReasons.set(spec.name, checked);
    if (checked.changed) warnings.push(untrustedLine(spec.name, checked));
    else neverTrusted.push(spec.name);
  }
  const untrusted = new Set(untrustedReasons.keys());
  if (neverTrusted.length > 0) {
    const names = neverTrusted;
    warnings.push(`MCP server${names.length > 1 ? 's' : ''} ${names.map((n) => `"${n}"`).join(', ')} of this workspace ${names.length > 1 ? 'are' : 'is'} not trusted yet and did not start: review ${names.length > 1 ? 'them' : 'it'} with \`legion mcp list\`, then \`legion mcp trust ${names.length > 1 ? '--all' : names[0]}\``);
  }
  return { servers: plan.servers, untrusted, untrustedReasons, disabled: plan.disabled, warnings, ...base };
}

/** `MCP server "x" is no longer trusted: tools/mcp.js changed since you trusted it; …`: what changed and what to do. */
type Untrusted = Extract<TrustCheck, { trusted: false }>;

function untrustedLine(name: string, checked: Untrusted): string {
  return `MCP server "${name}" is ${checked.changed ? 'no longer trusted' : 'not trusted'} and did not start: ${checked.reason}; review it with \`legion mcp list\`, then \`legion mcp trust ${name}\``;
}
