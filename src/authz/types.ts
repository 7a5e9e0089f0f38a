/** The outcome of authorizing one tool call (docs/design.md#authorization). */
export type Decision = 'allow' | 'ask' | 'deny';

/** What the rule engine + policies say about one call, before any approval. */
export interface Verdict {
  readonly decision: Decision;
  /** Id of the rule that decided, null when a policy or the default did. */
  readonly ruleId: string | null;
  readonly reason: string;
  /** Which layer decided. */
  readonly source: 'rule' | 'policy' | 'default' | 'tools' | 'confinement' | 'allowance' | 'hook';
  /** Decided by a fallback rule (no other rule matched, no policy spoke): what a PreToolUse hook's allow may answer (docs/conventions.md#hooks). */
  readonly fallback?: boolean;
  /** Explicit approver named by the rule, if any. */
  readonly approver?: string;
  /** An ask for a shell line that is not plain words (why): only a person may answer it, never a hook. */
  readonly notPlain?: string;
}

/** One tool call to authorize. */
export interface CallToAuthorize {
  readonly toolName: string;
  readonly input: unknown;
  readonly participantId: string;
  readonly sessionId: string;
  readonly chain: readonly string[];
  /**
   * Set for a session isolated in a git worktree (docs/worktrees.md): paths are confined to it,
   * and the fallback rules' ask for writes, edits and deletes becomes an allow (nothing outside changes).
   */
  readonly isolatedRoot?: string;
}
