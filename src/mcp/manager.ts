import type { EventInput } from '../events/types';
import type { Tool, ToolContext } from '../tools/types';
import type { ConnectionDeps, ElicitAnswer, McpState, ServerConnection } from './connection';
import { elicitationQuestion, parseElicitationAnswer } from './elicit';
import { assignToolNames } from './names';
import { createServerLog, mcpLogFile } from './server-log';
import { describeTransport, type McpServerSpec } from './servers';
import { createMcpTool, type McpTool } from './tool-adapter';

/** One configured server as `legion mcp list` and the UI see it. */
export interface McpServerStatus {
  readonly name: string;
  readonly state: McpState | 'untrusted';
  readonly transport: string;
  readonly tools: readonly McpTool[];
  readonly error?: string;
}

export interface McpManager {
  /** Start every trusted server in the background, all at once; returns at once. Idempotent. */
  start(): void;
  /** Settles when every server's first attempt is ready or failed (never rejects). */
  settled(): Promise<void>;
  /** The MCP tools of ready servers; the same array until the catalogue changes. */
  tools(): readonly Tool[];
  statuses(): McpServerStatus[];
  close(): Promise<void>;
}

export interface McpManagerOptions {
  readonly servers: readonly McpServerSpec[];
  /** Workspace servers the user has not approved: listed, never started. */
  readonly untrusted: ReadonlySet<string>;
  /** Checked before every start and restart of a server (`McpSetup.verify`): null, or why it must not start. */
  readonly verify: (spec: McpServerSpec) => Promise<string | null>;
  readonly legionDir: string;
  readonly clientVersion: string;
  /** Tool names already taken (built-in and collective tools). */
  readonly reservedNames: ReadonlySet<string>;
  readonly emit: (event: EventInput) => void;
  /** Literal secrets to keep out of the server logs (provider keys; each server's env and header values are added). */
  readonly secrets: readonly string[];
  readonly backoff?: ConnectionDeps['backoff'];
  /** False (headless) declines every elicitation without asking. */
  readonly canAskUser: boolean;
}

/**
 * All MCP servers of a workspace (docs/mcp.md): one connection each, started in parallel,
 * each failing or restarting on its own; their tools as Legion tools named
 * `mcp__<server>__<tool>`; `mcp-status` events and a notice when a server fails or comes back;
 * elicitations of a server go to the user's lane of the agent whose call is running.
 */
export function createMcpManager(options: McpManagerOptions): McpManager {
  const connections = new Map<string, ServerConnection>();
  const active = new Map<string, ToolContext[]>();
  let catalog: readonly Tool[] = [];
  let byServer = new Map<string, McpTool[]>();
  let started = false;
  let firstAttempts: Promise<void> = Promise.resolve();
  let closing = false;
  // After close() nothing is emitted: the run is ending and its ledger may be closed.
  const emit = (event: EventInput): void => {
    if (!closing) options.emit(event);
  };

  const rebuild = (): void => {
    const taken = new Set(options.reservedNames);
    const next = new Map<string, McpTool[]>();
    for (const spec of options.servers) {
      const connection = connections.get(spec.name);
      if (!connection || connection.state() === 'stopped') continue;
      const infos = connection.tools();
      const names = assignToolNames(spec.name, infos.map((t) => t.name), taken);
      const tools = infos.map((info) => {
        const name = names.get(info.name)!;
        taken.add(name);
        return createMcpTool(name, info, connection, adapterDeps(spec.name));
      });
      next.set(spec.name, tools);
    }
    byServer = next;
    catalog = [...next.values()].flat();
  };

  const adapterDeps = (server: string) => ({
    onProgress(context: ToolContext, p: { progress: number; total?: number; message?: string }) {
      emit({ type: 'tool-progress', sessionId: context.sessionId, participantId: context.participantId, toolUseId: context.toolUseId, ...p });
    },
    enter(context: ToolContext) {
      const list = active.get(server) ?? [];
      list.push(context);
      active.set(server, list);
      return () => {
        const at = list.indexOf(context);
        if (at >= 0) list.splice(at, 1);
      };
    },
  });

  const elicitFor = (server: string) => async (params: { message: string; requestedSchema?: unknown }, signal: AbortSignal): Promise<ElicitAnswer> => {
    const context = active.get(server)?.at(-1);
    if (!options.canAskUser || !context) return { action: 'decline' };
    const asked = await context.askUser(elicitationQuestion(server, params), { sessionName: 'mcp', signal: anySignal(signal, context.signal) });
    if (asked.isError) return { action: context.signal.aborted || signal.aborted ? 'cancel' : 'decline' };
    return parseElicitationAnswer(asked.content, params.requestedSchema);
  };

  const lastState = new Map<string, McpState>();
  const onStatus = (spec: McpServerSpec) => (state: McpState, _tools: unknown, error?: string): void => {
    const before = lastState.get(spec.name);
    lastState.set(spec.name, state);
    rebuild();
    const names = (byServer.get(spec.name) ?? []).map((t) => t.name);
    emit({ type: 'mcp-status', server: spec.name, state, tools: names, ...(error !== undefined ? { error } : {}) });
    if (state === 'failed') {
      emit({ type: 'notice', level: 'warn', message: `MCP server "${spec.name}" failed: ${error ?? 'unknown error'} (log: ${mcpLogFile(options.legionDir, spec.name)})` });
    } else if (state === 'ready' && before === 'starting' && lastFailed.has(spec.name)) {
      lastFailed.delete(spec.name);
      emit({ type: 'notice', level: 'info', message: `MCP server "${spec.name}" is back (${names.length} tools)` });
    }
    if (state === 'failed') lastFailed.add(spec.name);
  };
  const lastFailed = new Set<string>();

  // The SDK (a few hundred zod schemas) loads on the first start, never with the app: a
  // workspace without servers, and every first frame, pay nothing for it.
  const connect = async (): Promise<void> => {
    const trusted = options.servers.filter((spec) => !options.untrusted.has(spec.name));
    if (trusted.length === 0) return;
    const { createServerConnection } = await import('./connection');
    if (closing) return;
    for (const spec of trusted) {
      const secrets = [...options.secrets, ...Object.values(spec.transport.kind === 'stdio' ? spec.transport.env : spec.transport.headers)];
      connections.set(spec.name, createServerConnection({
        spec,
        log: createServerLog(mcpLogFile(options.legionDir, spec.name), { secrets }),
        clientVersion: options.clientVersion,
        onStatus: onStatus(spec),
        elicit: elicitFor(spec.name),
        verify: () => options.verify(spec),
        ...(options.backoff ? { backoff: options.backoff } : {}),
      }));
    }
    await Promise.all([...connections.values()].map((c) => c.start()));
  };

  return {
    start() {
      if (started) return;
      started = true;
      firstAttempts = connect().catch((error: unknown) => {
        emit({ type: 'notice', level: 'error', message: `MCP: could not start the client: ${error instanceof Error ? error.message : String(error)}` });
      });
    },
    settled: () => firstAttempts,
    tools: () => catalog,
    statuses() {
      return options.servers.map((spec) => {
        const connection = connections.get(spec.name);
        const error = connection?.error();
        return {
          name: spec.name,
          state: connection ? connection.state() : options.untrusted.has(spec.name) ? 'untrusted' : 'stopped',
          transport: describeTransport(spec.transport),
          tools: byServer.get(spec.name) ?? [],
          ...(error !== undefined ? { error } : {}),
        };
      });
    },
    async close() {
      closing = true;
      await Promise.all([...connections.values()].map((c) => c.close()));
    },
  };
}

function anySignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  return AbortSignal.any([a, b]);
}
