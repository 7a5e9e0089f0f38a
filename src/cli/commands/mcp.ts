import { homedir } from 'node:os';
import type { Command, CommandContext } from '../command';
import { LegionError } from '../../errors';
import { defaultConfigFiles, loadConfig } from '../../config/load';
import { layoutFor } from '../../storage/layout';
import { secretsFromEnv } from '../../authz/redact';
import { KNOWN_TOOLS } from '../../authz/rules/known-tools';
import { setupMcp, type McpSetup } from '../../mcp/compose-mcp';
import { describeTransport } from '../../mcp/servers';
import { createMcpManager, type McpServerStatus } from '../../mcp/manager';
import { annotationText } from '../../mcp/tool-adapter';
import { VERSION } from '../version';
import { realWorkspaceRoot, workspaceTrustOf } from '../workspace-root';

const USAGE = 'legion mcp list [--json] | trust <server...> | trust --all | untrust <server>';

/**
 * `legion mcp list` starts every trusted server, waits for each to be ready or failed, and
 * prints its state, transport and tools (untrusted and disabled servers are listed, never
 * started). `trust` approves workspace servers (their current definition) so they start;
 * `untrust` withdraws that (docs/mcp.md).
 */
export const mcpCommand: Command = {
  name: 'mcp',
  usage: USAGE,
  summary: 'MCP servers: list their state and tools, trust a workspace server',
  flags: { json: 'boolean', all: 'boolean' },
  async run(context) {
    const [sub, ...rest] = context.args.positionals;
    switch (sub) {
      case 'list':
        return list(context);
      case 'trust':
        return trust(context, rest);
      case 'untrust':
        return untrust(context, rest);
      default:
        throw new LegionError(sub ? `unknown mcp command "${sub}"; usage: ${USAGE}` : `usage: ${USAGE}`, 2);
    }
  },
};

async function load(context: CommandContext): Promise<{ setup: McpSetup; root: string; legionDir: string }> {
  const root = await realWorkspaceRoot(context.workspaceRoot);
  const env = context.io.env;
  const loaded = await loadConfig(defaultConfigFiles(context.appDir, root, env.HOME || homedir(), await workspaceTrustOf(context)));
  if (!loaded.ok) throw new LegionError(loaded.error);
  const layout = layoutFor(root);
  return { setup: await setupMcp({ config: loaded.config, layout, env }), root, legionDir: layout.legionDir };
}

async function list(context: CommandContext): Promise<number> {
  const { setup, legionDir } = await load(context);
  const { io } = context;
  for (const warning of setup.warnings) io.stderr(`legion: warning: ${warning}\n`);
  const manager = createMcpManager({
    servers: setup.servers, untrusted: setup.untrusted, verify: setup.verify, legionDir, clientVersion: VERSION,
    reservedNames: new Set(KNOWN_TOOLS), emit: () => undefined, secrets: secretsFromEnv(io.env), canAskUser: false,
    backoff: { baseMs: 1000, maxMs: 1000, maxAttempts: 1 },
  });
  manager.start();
  await manager.settled();
  const statuses = manager.statuses();
  await manager.close();
  if (context.args.flags.has('json')) {
    const out = {
      servers: statuses.map((s) => ({
        name: s.name, state: s.state, transport: s.transport, ...(s.error ? { error: s.error } : {}),
        tools: s.tools.map((t) => ({ name: t.name, tool: t.mcp.tool, annotations: t.mcp.annotations ?? null })),
      })),
      disabled: setup.disabled,
    };
    io.stdout(JSON.stringify(out, null, 2) + '\n');
    return 0;
  }
  if (statuses.length === 0 && setup.disabled.length === 0) {
    io.stdout('no MCP servers configured (add them under mcpServers in .legion/config.yaml or in .mcp.json; see docs/mcp.md)\n');
    return 0;
  }
  for (const status of statuses) io.stdout(describe(status, setup.untrustedReasons.get(status.name)));
  for (const name of setup.disabled) io.stdout(`${name}  disabled\n`);
  return 0;
}

function describe(status: McpServerStatus, untrusted: { readonly changed: boolean; readonly reason: string } | undefined): string {
  const head = `${status.name}  ${status.state}  ${status.transport}  ${status.tools.length} tool${status.tools.length === 1 ? '' : 's'}`;
  const lines = [head];
  if (status.state === 'untrusted') {
    const why = untrusted?.changed ? `no longer trusted: ${untrusted.reason}` : 'defined by this workspace';
    lines.push(`  not started: ${why}; run \`legion mcp trust ${status.name}\` once you have checked the command above`);
  }
  if (status.error) lines.push(`  error: ${status.error}`);
  for (const tool of status.tools) lines.push(`  ${tool.name}  (${annotationText(tool.mcp.annotations)})`);
  return lines.join('\n') + '\n';
}

async function trust(context: CommandContext, names: readonly string[]): Promise<number> {
  const { setup, root } = await load(context);
  const all = context.args.flags.has('all');
  if (!all && names.length === 0) throw new LegionError(`usage: ${USAGE}`, 2);
  const workspaceServers = setup.servers.filter((s) => s.fromWorkspace);
  const chosen = all ? workspaceServers : names.map((name) => {
    const spec = setup.servers.find((s) => s.name === name);
    if (!spec) throw new LegionError(`no MCP server "${name}" here (see legion mcp list)`, 2);
    return spec;
  });
  for (const spec of chosen) {
    const definition = await setup.definitionOf(spec);
    await setup.trust.trust(root, spec.name, definition);
    const files = Object.keys(definition.files);
    const pinned = files.length ? `; pinned to the content of ${files.join(', ')}` : '';
    context.io.stdout(`trusted "${spec.name}" (${describeTransport(spec.transport)})${pinned}; it starts with the next legion session\n`);
  }
  if (chosen.length === 0) context.io.stdout('no workspace MCP servers to trust\n');
  return 0;
}

async function untrust(context: CommandContext, names: readonly string[]): Promise<number> {
  if (names.length !== 1) throw new LegionError(`usage: ${USAGE}`, 2);
  const { setup, root } = await load(context);
  const removed = await setup.trust.revoke(root, names[0]!);
  context.io.stdout(removed ? `"${names[0]}" is no longer trusted\n` : `"${names[0]}" was not trusted\n`);
  return 0;
}
