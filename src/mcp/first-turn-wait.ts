import type { EventInput } from '../events/types';
import type { McpManager } from './manager';

/** Longest a message's turn waits for MCP servers still starting (docs/mcp.md#lifecycle). */
export const MCP_TURN_WAIT_MS = 10_000;

export interface McpTurnWaitOptions {
  readonly mcp: Pick<McpManager, 'start' | 'settled' | 'statuses'>;
  readonly emit: (event: EventInput) => void;
  readonly capMs?: number;
}

/**
 * What a turn started by a message awaits so that its request offers the MCP tools: a message
 * sent in the first seconds (before the servers started after the first frame are ready) would
 * otherwise go to the model without them, and the agent would answer that it has no such tool.
 * Starts the servers if no one has; waits until every server's first attempt is ready or failed,
 * at most `capMs` (a notice says so, naming the servers), and only once: once the servers have
 * settled or the wait has run out, later turns never wait here again. A turn whose `signal`
 * aborts stops waiting at once. Never rejects.
 */
export function createMcpTurnWait(options: McpTurnWaitOptions): (signal?: AbortSignal) => Promise<void> {
  const capMs = options.capMs ?? MCP_TURN_WAIT_MS;
  let done = false;
  let waiting: Promise<void> | undefined;
  // A trusted server is `stopped` until the manager has loaded the SDK and created its connection.
  const starting = (): string[] => options.mcp.statuses().filter((s) => s.state === 'starting' || s.state === 'stopped').map((s) => s.name);

  const waitOnce = async (): Promise<void> => {
    options.mcp.start();
    const settled = options.mcp.settled().then(() => true);
    const names = starting();
    if (names.length > 0) options.emit({ type: 'notice', level: 'info', message: `waiting for MCP ${plural(names)} to start before the first turn` });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), capMs);
    });
    const inTime = await Promise.race([settled, timedOut]);
    clearTimeout(timer);
    done = true;
    if (!inTime) {
      const late = starting();
      if (late.length > 0) options.emit({ type: 'notice', level: 'warn', message: `MCP ${plural(late)} still starting after ${capMs / 1000} s: this turn goes without ${late.length === 1 ? 'its' : 'their'} tools` });
    }
  };

  return (signal) => {
    if (done || signal?.aborted) return Promise.resolve();
    waiting ??= waitOnce().catch(() => {
      done = true;
    });
    if (!signal) return waiting;
    // A cancelled turn (Esc, quit, `legion stop`) stops waiting at once; the wait goes on for others.
    return new Promise<void>((resolve) => {
      const stop = (): void => resolve();
      signal.addEventListener('abort', stop, { once: true });
      void waiting!.then(() => {
        signal.removeEventListener('abort', stop);
        resolve();
      });
    });
  };
}

function plural(names: readonly string[]): string {
  return names.length === 1 ? `server ${names[0]}` : `servers ${names.join(', ')}`;
}
