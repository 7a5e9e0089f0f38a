/**
 * The shape shared by the approval queue (src/authz/approvals) and the core's command
 * interface (src/runtime/core-api.ts), kept below both so neither imports the other's types.
 */

/** A pending approval as the UI and `legion run` see it. */
export interface PendingApproval {
  readonly requestId: string;
  readonly sessionId: string;
  readonly participantId: string;
  readonly chain: readonly string[];
  readonly toolUseId: string;
  readonly toolName: string;
  readonly input: unknown;
  readonly ruleId: string | null;
  readonly reason?: string;
  /** Who the request waits on now (changes when the cascade climbs). */
  readonly approverId: string;
  /** ISO time the request was raised. */
  readonly at: string;
  /** For tools that start processes: whether the call will run in the OS sandbox (docs/sandbox.md). */
  readonly sandboxed?: boolean;
}
