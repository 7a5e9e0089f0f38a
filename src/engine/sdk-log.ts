import type { LoggerTransport, LogMetadata } from '@restatedev/restate-sdk';

/** What the SDK reports at these levels reaches the worker's log; below them, only a replay's start. */
const KEPT_LEVELS: ReadonlySet<string> = new Set(['warn', 'error']);
/** The SDK's line when an invocation starts over from its journal (docs/engine.md#a-turn-on-a-worker). */
const REPLAYING = 'Replaying invocation.';

/**
 * The Restate SDK's log on a worker (docs/engine.md#performance): warnings, errors and the start
 * of a replay, to `write` (the worker's stderr), each as one line naming the invocation. The
 * SDK's default writes two lines to stdout for every turn (its start and its end) at INFO,
 * ~2% of a busy worker's CPU with 20 sessions streaming. Lines logged while the SDK replays a
 * journal are left out, as the default does. `RESTATE_LOGGING` set: undefined, the SDK's own
 * logger at that level.
 */
export function workerSdkLogger(env: Readonly<Record<string, string | undefined>>, write: (line: string) => void): LoggerTransport | undefined {
  if (env.RESTATE_LOGGING) return undefined;
  return (meta: LogMetadata, message?: unknown, ...rest: unknown[]) => {
    if (meta.replaying) return;
    if (!KEPT_LEVELS.has(meta.level) && message !== REPLAYING) return;
    const where = meta.context ? ` [${meta.context.invocationTarget}][${meta.context.invocationId}]` : '';
    const text = [message, ...rest].map(shown).join(' ');
    write(`[restate]${where} ${meta.level.toUpperCase()}: ${text}\n`);
  };
}

function shown(part: unknown): string {
  if (part instanceof Error) return part.stack ?? part.message;
  if (typeof part === 'string') return part;
  try {
    return JSON.stringify(part) ?? String(part);
  } catch {
    return String(part); // a cycle
  }
}
