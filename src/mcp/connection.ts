import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema, ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerSpec } from './servers';
import type { ServerLog } from './server-log';
import { createTransport } from './transport';
import { describeTransport } from './servers';
import type { McpCallResult } from './result';
import { DEFAULT_PING_INTERVAL_MS } from './servers';
import { isTransportFailure, startIdlePinger, type IdlePinger } from './health';

export type McpState = 'starting' | 'ready' | 'failed' | 'stopped';

/** One tool as the server lists it. */
export interface McpToolInfo {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema: unknown;
  readonly annotations?: { readonly readOnlyHint?: boolean; readonly destructiveHint?: boolean; readonly idempotentHint?: boolean; readonly openWorldHint?: boolean; readonly title?: string };
}

export interface McpProgress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** A server's request for user input (`elicitation/create`), answered per MCP. */
export interface ElicitParams {
  readonly message: string;
  readonly requestedSchema?: unknown;
}
export type ElicitAnswer = { readonly action: 'accept'; readonly content: Record<string, unknown> } | { readonly action: 'decline' | 'cancel' };

export type McpCallOutcome = { readonly ok: true; readonly result: McpCallResult } | { readonly ok: false; readonly error: string; readonly kind: 'timeout' | 'cancelled' | 'unavailable' | 'protocol' };

export interface ConnectionDeps {
  readonly spec: McpServerSpec;
  readonly log: ServerLog;
  readonly clientVersion: string;
  /** Every state change, with the tools known then and why it failed. */
  onStatus(state: McpState, tools: readonly McpToolInfo[], error?: string): void;
  /** Present when someone can answer elicitations (else the capability is not declared). */
  readonly elicit?: (params: ElicitParams, signal: AbortSignal) => Promise<ElicitAnswer>;
  /** Restart delays: `baseMs * 2^n`, at most `maxMs`; after `maxAttempts` failures in a row it stays failed. */
  readonly backoff?: { readonly baseMs: number; readonly maxMs: number; readonly maxAttempts: number };
  /** For tests: a transport of their own instead of `createTransport(spec.transport)`. */
  readonly makeTransport?: () => Transport;
  /**
   * Asked before every start and restart: null lets the process start, a line refuses it (the
   * attempt fails with that line). The trust check (docs/mcp.md, "Trust"): a workspace file the
   * server runs, rewritten since it was trusted, never starts.
   */
  readonly verify: () => Promise<string | null>;
}

export interface ServerConnection {
  readonly name: string;
  state(): McpState;
  error(): string | undefined;
  tools(): readonly McpToolInfo[];
  /** Connect (if not already): settles when the first attempt is ready or failed; never rejects. */
  start(): Promise<void>;
  call(tool: string, args: Record<string, unknown>, options: { signal: AbortSignal; onProgress?: (p: McpProgress) => void }): Promise<McpCallOutcome>;
  /** Stop for good: no restart; kills a stdio server. */
  close(): Promise<void>;
}

const DEFAULT_BACKOFF = { baseMs: 1000, maxMs: 60_000, maxAttempts: 6 };

/**
 * One MCP server over the SDK client: connects with `startTimeoutMs` for the transport and
 * `initialize` together, lists the tools (all pages), refreshes them on
 * `notifications/tools/list_changed`, and restarts with exponential backoff when the
 * connection fails or drops. Calls carry the per-server `timeoutMs` and the caller's signal
 * (abort → the SDK sends `notifications/cancelled`); a call in flight when the server dies
 * ends with an error outcome. Nothing here throws at the caller.
 *
 * A dead server is noticed (docs/mcp.md, Lifecycle): a stdio process that exits closes the
 * transport; for streamable HTTP, a request failing in the transport, a transport error (a
 * response stream cut off) confirmed by a failed `ping`, or a failed `ping` of an idle
 * server every `pingIntervalMs`. Then the client is closed (calls in flight end at once as
 * `unavailable`), the server is `failed` and restarts with backoff. A call to a failed server
 * reconnects at once when the last attempt is at least `backoff.baseMs` old (so a server that
 * gave up comes back on the next use); otherwise it is an `unavailable` outcome at once.
 */
export function createServerConnection(deps: ConnectionDeps): ServerConnection {
  const { spec, log } = deps;
  const backoff = deps.backoff ?? DEFAULT_BACKOFF;
  let state: McpState = 'stopped';
  let error: string | undefined;
  let tools: readonly McpToolInfo[] = [];
  let client: Client | null = null;
  let connecting: Client | null = null;
  let changedWhileConnecting = false;
  let closed = false;
  let failures = 0;
  let restartTimer: NodeJS.Timeout | null = null;
  let first: Promise<void> | null = null;
  let readyWaiters: Array<() => void> = [];
  let inFlight = 0;
  let pinger: IdlePinger | null = null;
  let probing = false;
  let lastAttemptEnded = 0;

  const setState = (next: McpState, why?: string): void => {
    state = next;
    error = why;
    if (next === 'ready' || next === 'failed' || next === 'stopped') {
      for (const wake of readyWaiters) wake();
      readyWaiters = [];
    }
    deps.onStatus(next, tools, why);
  };

  const listAll = async (c: Client): Promise<McpToolInfo[]> => {
    const all: McpToolInfo[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const listed = await c.listTools(cursor ? { cursor } : undefined, { timeout: spec.startTimeoutMs });
      all.push(...(listed.tools as McpToolInfo[]));
      cursor = listed.nextCursor;
      if (!cursor) break;
    }
    return all;
  };

  const connectOnce = async (): Promise<void> => {
    setState('starting');
    log.note(`starting (${describeTransport(spec.transport)})`);
    const c = new Client({ name: 'legion', version: deps.clientVersion }, { capabilities: deps.elicit ? { elicitation: {} } : {} });
    let refused: string | null;
    try {
      refused = await deps.verify();
    } catch (e) {
      refused = `could not check its trust: ${describe(e)}`;
    }
    if (closed) return;
    if (refused !== null) return fail(refused, null);
    let transport: Transport;
    try {
      transport = deps.makeTransport ? deps.makeTransport() : createTransport(spec.transport, (chunk) => log.write(chunk));
    } catch (e) {
      return fail(describe(e), null);
    }
    if (deps.elicit) {
      const elicit = deps.elicit;
      c.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
        const params = request.params as { message?: unknown; requestedSchema?: unknown };
        const answer = await elicit({ message: String(params.message ?? ''), requestedSchema: params.requestedSchema }, extra.signal);
        return answer as unknown as Record<string, unknown> & { action: 'accept' | 'decline' | 'cancel' };
      });
    }
    c.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      if (connecting === c) {
        changedWhileConnecting = true; // listed again once the first list is in
        return;
      }
      if (client !== c) return;
      try {
        tools = await listAll(c);
        log.note(`tools changed: ${tools.length} tools`);
        if (client === c && state === 'ready') setState('ready');
      } catch (e) {
        log.note(`refreshing tools failed: ${describe(e)}`);
      }
    });
    c.onclose = () => {
      if (client !== c || closed) return;
      client = null;
      fail('the server closed the connection', null);
    };
    c.onerror = (e) => {
      if (client !== c || closed) return;
      log.note(`transport error: ${describe(e)}`);
      probe(c);
    };
    connecting = c;
    changedWhileConnecting = false;
    try {
      await c.connect(transport, { timeout: spec.startTimeoutMs });
      tools = await listAll(c);
      if (changedWhileConnecting) {
        tools = await listAll(c);
        log.note(`tools changed while connecting: ${tools.length} tools`);
      }
    } catch (e) {
      connecting = null;
      await c.close().catch(() => undefined);
      return fail(describe(e), null);
    }
    connecting = null;
    if (closed) {
      await c.close().catch(() => undefined);
      return;
    }
    client = c;
    failures = 0;
    log.note(`ready: ${tools.length} tools`);
    pinger = startIdlePinger(spec.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS, () => inFlight, () => probe(c));
    setState('ready');
  };

  /** Ask the server whether it is there; no answer within a bounded time → `lost`. */
  const probe = (c: Client): void => {
    if (probing || client !== c) return;
    probing = true;
    c.ping({ timeout: Math.min(spec.startTimeoutMs, 10_000) })
      .then(() => pinger?.touch())
      .catch((e: unknown) => lost(c, `not answering: ${describe(e)}`))
      .finally(() => { probing = false; });
  };

  /** The server behind `c` is gone: close the client (its pending requests end at once), then fail and restart. */
  const lost = (c: Client, why: string): void => {
    if (client !== c || closed) return;
    client = null;
    void c.close().catch(() => undefined);
    fail(why, c);
  };

  const fail = (why: string, _c: Client | null): void => {
    if (closed) return;
    pinger?.stop();
    pinger = null;
    lastAttemptEnded = Date.now();
    failures += 1;
    log.note(`failed: ${why}`);
    const retry = failures < backoff.maxAttempts;
    setState('failed', retry || backoff.maxAttempts <= 1 ? why : `${why} (gave up after ${failures} attempts)`);
    if (!retry) return;
    const delay = Math.min(backoff.maxMs, backoff.baseMs * 2 ** (failures - 1));
    restartTimer = setTimeout(() => {
      restartTimer = null;
      if (!closed) void connectOnce();
    }, delay);
    restartTimer.unref?.();
  };

  const waitSettled = (signal: AbortSignal, ms: number): Promise<void> =>
    new Promise((resolve) => {
      if (state === 'ready' || signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done, { once: true });
      readyWaiters.push(done);
    });

  return {
    name: spec.name,
    state: () => state,
    error: () => error,
    tools: () => tools,
    start() {
      first ??= connectOnce();
      return first;
    },
    async call(tool, args, options) {
      // A failed server is reconnected on use (once its last attempt is baseMs old), and a
      // server (re)starting gets one start timeout to come back; a fresh failure answers at once.
      if (state === 'failed' && !closed && first !== null && Date.now() - lastAttemptEnded >= backoff.baseMs) {
        if (restartTimer) clearTimeout(restartTimer);
        restartTimer = null;
        void connectOnce();
      }
      if (state === 'starting') await waitSettled(options.signal, spec.startTimeoutMs);
      if (options.signal.aborted) return { ok: false, kind: 'cancelled', error: 'cancelled' };
      const c = client;
      if (!c || state !== 'ready') {
        return { ok: false, kind: 'unavailable', error: `MCP server "${spec.name}" is not available (${state}${error ? `: ${error}` : ''})` };
      }
      // A signal of its own per call, linked to the caller's and unlinked after: the SDK's
      // listeners die with it, so a long-lived caller signal does not collect them.
      const own = new AbortController();
      const forward = (): void => own.abort(options.signal.reason);
      options.signal.addEventListener('abort', forward, { once: true });
      inFlight += 1;
      pinger?.touch();
      try {
        const result = await c.callTool({ name: tool, arguments: args }, undefined, {
          signal: own.signal,
          timeout: spec.timeoutMs,
          ...(options.onProgress ? { onprogress: (p: McpProgress) => options.onProgress!({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message !== undefined ? { message: p.message } : {}) }) } : {}),
        });
        return { ok: true, result: result as McpCallResult };
      } catch (e) {
        if (options.signal.aborted) return { ok: false, kind: 'cancelled', error: 'cancelled' };
        if (e instanceof McpError && e.code === ErrorCode.RequestTimeout) {
          return { ok: false, kind: 'timeout', error: `MCP server "${spec.name}" did not answer within ${spec.timeoutMs} ms (timeoutMs)` };
        }
        if (e instanceof McpError && e.code === ErrorCode.ConnectionClosed) {
          return { ok: false, kind: 'unavailable', error: `MCP server "${spec.name}" stopped during the call: ${describe(e)}` };
        }
        if (isTransportFailure(e)) {
          lost(c, `unreachable: ${describe(e)}`);
          return { ok: false, kind: 'unavailable', error: `MCP server "${spec.name}" is unreachable (${describe(e)}); Legion reconnects with backoff` };
        }
        return { ok: false, kind: 'protocol', error: `MCP server "${spec.name}": ${describe(e)}` };
      } finally {
        inFlight -= 1;
        pinger?.touch();
        options.signal.removeEventListener('abort', forward);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      if (restartTimer) clearTimeout(restartTimer);
      pinger?.stop();
      pinger = null;
      const c = client;
      client = null;
      await c?.close().catch(() => undefined);
      log.note('stopped');
      log.flush();
      setState('stopped');
    },
  };
}

function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/^MCP error -?\d+: /, '').split('\n')[0]!.slice(0, 300);
}
