import { createHash } from 'node:crypto';
import type { DecidedBy } from '../events/types';
import { appendJsonl } from '../storage/jsonl';
import type { Layout } from '../storage/layout';
import type { Clock } from './approvals/deps';
import { redact } from './redact';

/** The final word on one tool call: rules/policies (`allow`/`deny`) or an approver. */
export type AuditDecision = 'allow' | 'deny' | 'approved' | 'rejected' | 'expired';

export interface AuditEntry {
  readonly runId: string;
  readonly sessionId: string;
  readonly participantId: string;
  readonly chain: readonly string[];
  readonly toolName: string;
  readonly input: unknown;
  readonly decision: AuditDecision;
  readonly decidedBy: DecidedBy;
  readonly ruleId: string | null;
  readonly reason: string;
  /** The LLM triage's reasoning, when triage looked at the request (approve or defer). */
  readonly triageReasoning?: string;
  /** The approval request id, when the call went through the queue. */
  readonly requestId?: string;
}

/** One line of `.legion/audit/audit-YYYY-MM-DD.jsonl` (UTC date of `at`): the entry, its input as digest and preview. */
export interface AuditLine extends Omit<AuditEntry, 'input'> {
  readonly version: 1;
  readonly at: string;
  /** `sha256:<hex>` of the canonical JSON of the raw input (keys sorted): verifies an input without storing it. */
  readonly inputDigest: string;
  /** Redacted canonical JSON of the input, cut to `PREVIEW_LENGTH` characters. */
  readonly inputPreview: string;
}

export const PREVIEW_LENGTH = 240;

export interface AuditLog {
  /** Append one line. Errors are values: the runtime reports a failed write as a `notice`. */
  record(entry: AuditEntry): { ok: true; line: AuditLine } | { ok: false; error: string };
}

/** `secrets`: literal values to redact besides the token shapes (see `secretsFromEnv`). */
export function createAuditLog(layout: Layout, clock: Clock, options: { readonly secrets?: readonly string[] } = {}): AuditLog {
  const secrets = options.secrets ?? [];
  return {
    record(entry) {
      const now = clock();
      const canonical = canonicalJson(entry.input);
      const preview = redact(canonical, secrets);
      const line: AuditLine = {
        version: 1,
        at: now.toISOString(),
        runId: entry.runId,
        sessionId: entry.sessionId,
        participantId: entry.participantId,
        chain: [...entry.chain],
        toolName: entry.toolName,
        inputDigest: `sha256:${createHash('sha256').update(canonical).digest('hex')}`,
        inputPreview: preview.length > PREVIEW_LENGTH ? `${preview.slice(0, PREVIEW_LENGTH - 1)}…` : preview,
        decision: entry.decision,
        decidedBy: entry.decidedBy,
        ruleId: entry.ruleId,
        reason: redact(entry.reason, secrets),
        ...(entry.triageReasoning !== undefined ? { triageReasoning: redact(entry.triageReasoning, secrets) } : {}),
        ...(entry.requestId !== undefined ? { requestId: entry.requestId } : {}),
      };
      const file = layout.audit(now);
      try {
        appendJsonl(file, line);
      } catch (error) {
        return { ok: false, error: `audit: could not write ${file}: ${(error as Error).message}` };
      }
      return { ok: true, line };
    },
  };
}

/**
 * JSON with object keys sorted at every level and no whitespace, so equal inputs hash
 * equally whatever their key order. `undefined` members are dropped (as JSON.stringify does);
 * values JSON cannot hold (bigint, functions) become strings.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)) ?? 'null';
}

function sortKeys(value: unknown): unknown {
  if (typeof value === 'bigint' || typeof value === 'function' || typeof value === 'symbol') return String(value);
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}
