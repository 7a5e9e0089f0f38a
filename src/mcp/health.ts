import { McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * How an MCP connection notices that its server is gone (docs/mcp.md, Lifecycle). A stdio
 * server that exits closes its transport, which the SDK reports; a streamable-HTTP server that
 * dies closes nothing: the next request fails to connect, a response stream breaks off, or
 * nothing happens at all while the connection is idle. These helpers tell such failures apart
 * from the server's own errors and ping idle servers.
 */

/**
 * True for a failure of the transport itself (connection refused or reset, a stream cut off,
 * an HTTP status from the endpoint, "Not connected"), as opposed to a JSON-RPC error the
 * server answered with (`McpError`), which says the server is alive.
 */
export function isTransportFailure(error: unknown): boolean {
  if (error instanceof McpError) return false;
  if (error instanceof TypeError) return true; // fetch(): "fetch failed" (ECONNREFUSED, ECONNRESET…)
  if (!(error instanceof Error)) return false;
  if (error.name === 'StreamableHTTPError' || error.constructor?.name === 'StreamableHTTPError') return true;
  return /fetch failed|ECONNREFUSED|ECONNRESET|EPIPE|socket hang up|other side closed|SSE stream disconnected|Failed to reconnect|Maximum reconnection attempts|Not connected|Error POSTing to endpoint/i.test(error.message);
}

export interface IdlePinger {
  /** A request was sent or answered: the server is not idle. */
  touch(): void;
  stop(): void;
}

/**
 * Every `intervalMs`, when nothing was sent or received for that long and no call is in
 * flight, run `ping` (one `ping` request: cheap for any server). `intervalMs` 0 = never.
 * The timer never keeps the process alive.
 */
export function startIdlePinger(intervalMs: number, inFlight: () => number, ping: () => void, now: () => number = Date.now): IdlePinger {
  let last = now();
  if (intervalMs <= 0) return { touch() { last = now(); }, stop() {} };
  const timer = setInterval(() => {
    if (inFlight() > 0 || now() - last < intervalMs) return;
    last = now();
    ping();
  }, intervalMs);
  timer.unref?.();
  return {
    touch() { last = now(); },
    stop() { clearInterval(timer); },
  };
}
