import { homedir } from 'node:os';
import type { LegionConfig } from '../config/schema';
import type { Layout } from '../storage/layout';
import { mcpJsonPath, planServers, projectLayerServerNames, readMcpJson, type McpServerSpec } from './servers';
import { createTrustStore, trustFilePath, type TrustStore } from './trust';

/** The workspace's MCP servers, before anything starts: what to start, what waits for trust. */
export interface McpSetup {
  readonly servers: readonly McpServerSpec[];
  /** Workspace-defined servers whose current definition the user has not approved. */
  readonly untrusted: ReadonlySet<string>;
  readonly disabled: readonly string[];
  readonly warnings: string[];
  readonly trust: TrustStore;
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
  if (!hasAny) return { servers: [], untrusted: new Set(), disabled: [], warnings: mcpJson.warnings, trust };
  const plan = planServers({
    fromConfig: config.mcpServers,
    fromMcpJson: mcpJson.entries,
    projectNames: await projectLayerServerNames(layout.config),
    env,
    workspaceRoot: layout.root,
    mcpJsonFile: file,
  });
  const untrusted = new Set<string>();
  for (const spec of plan.servers) {
    if (spec.fromWorkspace && !(await trust.isTrusted(layout.root, spec.name, spec.fingerprint))) untrusted.add(spec.name);
  }
  const warnings = [...mcpJson.warnings, ...plan.warnings];
  if (untrusted.size > 0) {
    const names = [...untrusted];
    warnings.push(`MCP server${names.length > 1 ? 's' : ''} ${names.map((n) => `"${n}"`).join(', ')} of this workspace ${names.length > 1 ? 'are' : 'is'} not trusted yet and did not start: review ${names.length > 1 ? 'them' : 'it'} with \`legion mcp list\`, then \`legion mcp trust ${names.length > 1 ? '--all' : names[0]}\``);
  }
  return { servers: plan.servers, untrusted, disabled: plan.disabled, warnings, trust };
}
