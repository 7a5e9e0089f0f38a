/**
 * How an attached core tries a lost connection again (docs/serve.md#when-the-server-goes-away):
 * the delay before each try doubles from `firstDelayMs` up to `maxDelayMs`; a policy with
 * `maxTries: Infinity` tries until the front end detaches (the user quits). `afterBye`: a
 * server that said goodbye (it is stopping: `legion stop`, a supervisor's SIGTERM) is waited
 * for too, as a restart usually follows.
 */
export interface ReconnectPolicy {
  readonly firstDelayMs: number;
  readonly maxDelayMs: number;
  readonly maxTries: number;
  readonly afterBye: boolean;
}

/** The TUI: a person watches and quits with Ctrl+C; a server restart may take any time. */
export const UNTIL_DETACHED: ReconnectPolicy = { firstDelayMs: 100, maxDelayMs: 2000, maxTries: Infinity, afterBye: true };

/** `legion run` and other clients no one watches: a dropped link (not a stopped server) for about 3 s. */
export const BRIEF: ReconnectPolicy = { firstDelayMs: 100, maxDelayMs: 1600, maxTries: 5, afterBye: false };

/** The delay before try `attempt` (0-based). */
export function reconnectDelayMs(policy: ReconnectPolicy, attempt: number): number {
  return Math.min(policy.firstDelayMs * 2 ** Math.min(attempt, 30), policy.maxDelayMs);
}
