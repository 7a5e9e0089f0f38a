import micromatch from 'micromatch';
import { UR_AGENT_ID, USER_ID, type Agent, type Participant, type ToolAuthorization } from '../collective/participant';
import { policyFor } from './policy';
import { hasGlobSyntax, KNOWN_TOOLS } from './rules/known-tools';

/**
 * No privilege escalation (docs/design.md#authorization): what `spawn_agent` / `modify_agent` may grant and
 * who may be retired. The user holds everything. For an agent caller:
 *   - every requested tool must be covered by the caller's own `tools`;
 *   - a requested `approvalAuthority` must be covered by the caller's (only `*` covers `*`);
 *   - an agent cannot change its own `approvalAuthority` (no self-promotion to approver);
 *   - the resulting policy (`toolAuthorizations`) may be no looser than the caller's for
 *     any tool the target ends up with (auto < none < requires_approval < deny);
 *   - an existing target must not hold more than the caller (tools or authority): changing
 *     a more powerful agent would direct rights the caller does not have;
 *   - nobody modifies the user through these tools.
 * Globs are compared conservatively: a requested glob is covered only by the same glob,
 * by `*`, or by a caller glob `prefix*` whose prefix starts it (caller `mcp__*` covers
 * `mcp__github__*`); a requested name is covered by any caller glob matching it.
 */
export type GrantCheck = { ok: true } | { ok: false; error: string };

export interface GrantRequest {
  readonly tools?: readonly string[];
  readonly approvalAuthority?: '*' | readonly string[];
  readonly toolAuthorizations?: Readonly<Record<string, ToolAuthorization>>;
}

const OK: GrantCheck = { ok: true };

export function checkGrant(caller: Participant, requested: GrantRequest, target?: Participant): GrantCheck {
  if (target?.kind === 'user') return { ok: false, error: `"${target.id}" is the user, not an agent: it cannot be modified` };
  if (caller.kind === 'user') return OK;

  if (target?.id === caller.id && requested.approvalAuthority !== undefined && !sameAuthority(requested.approvalAuthority, caller.approvalAuthority)) {
    return { ok: false, error: 'an agent cannot change its own approvalAuthority' };
  }
  const missingTools = (requested.tools ?? []).filter((t) => !covers(caller.tools, t));
  if (missingTools.length) return { ok: false, error: `cannot grant tools you do not hold: ${missingTools.join(', ')}` };
  const authorityProblem = authorityBeyond(caller.approvalAuthority, requested.approvalAuthority);
  if (authorityProblem) return { ok: false, error: `cannot grant approvalAuthority beyond your own: ${authorityProblem}` };

  if (target && target.kind === 'agent') {
    const heldTools = target.tools.filter((t) => !covers(caller.tools, t));
    if (heldTools.length) return { ok: false, error: `cannot change "${target.id}": it holds tools you do not (${heldTools.join(', ')})` };
    const heldAuthority = authorityBeyond(caller.approvalAuthority, target.approvalAuthority);
    if (heldAuthority) return { ok: false, error: `cannot change "${target.id}": it holds approvalAuthority you do not (${heldAuthority})` };
  }

  const tools = requested.tools ?? (target?.kind === 'agent' ? target.tools : []);
  const policies = requested.toolAuthorizations ?? (target?.kind === 'agent' ? target.toolAuthorizations : {});
  for (const probe of probesFor(tools)) {
    const mine = policyFor(caller.toolAuthorizations, probe)?.level;
    const theirs = policyFor(policies, probe)?.level;
    if (rank(theirs) < rank(mine)) {
      return { ok: false, error: `cannot set a looser policy for "${probe}" (${theirs ?? 'none'}) than your own (${mine ?? 'none'})` };
    }
  }
  return OK;
}

/** Nobody retires the user or ur-agent. */
export function checkRetire(caller: Participant, target: Participant): GrantCheck {
  void caller;
  if (target.kind === 'user' || target.id === USER_ID) return { ok: false, error: 'the user cannot be retired' };
  if (target.id === UR_AGENT_ID) return { ok: false, error: `${UR_AGENT_ID} cannot be retired: it is the user's entry point` };
  return OK;
}

/**
 * The same checks in the shape of the runtime's `GrantGuard` port (src/runtime/ports.ts):
 * `proposed` is the agent as it would be after the call, `existing` the agent before a modify.
 * Returns null when allowed, else why not.
 */
export const grantGuard = {
  grant(caller: Participant, proposed: Agent, existing: Agent | undefined): string | null {
    const result = checkGrant(caller, { tools: proposed.tools, approvalAuthority: proposed.approvalAuthority, toolAuthorizations: proposed.toolAuthorizations }, existing);
    return result.ok ? null : result.error;
  },
  retire(caller: Participant, target: Participant): string | null {
    const result = checkRetire(caller, target);
    return result.ok ? null : result.error;
  },
};

const RANKS: Record<ToolAuthorization | 'none', number> = { auto: 0, none: 1, requires_approval: 2, deny: 3 };
const rank = (level: ToolAuthorization | undefined): number => RANKS[level ?? 'none'];

/** Whether a glob set covers one requested tool name or glob (conservatively). */
export function covers(globs: '*' | readonly string[], requested: string): boolean {
  if (globs === '*') return true;
  if (globs.includes(requested) || globs.includes('*') || globs.includes('**')) return true;
  if (!hasGlobSyntax(requested)) return globs.some((g) => hasGlobSyntax(g) && micromatch.isMatch(requested, g, { dot: true }));
  return globs.some((g) => {
    if (!g.endsWith('*')) return false;
    const prefix = g.slice(0, -1);
    return !hasGlobSyntax(prefix) && requested.startsWith(prefix);
  });
}

/** What of `requested` authority `held` does not cover, or null. */
function authorityBeyond(held: '*' | readonly string[], requested: '*' | readonly string[] | undefined): string | null {
  if (requested === undefined || held === '*') return null;
  if (requested === '*') return '*';
  const missing = requested.filter((r) => !covers(held, r));
  return missing.length ? missing.join(', ') : null;
}

function sameAuthority(a: '*' | readonly string[], b: '*' | readonly string[]): boolean {
  if (a === '*' || b === '*') return a === b;
  return a.length === b.length && [...a].sort().every((v, i) => v === [...b].sort()[i]);
}

/** Tool names to compare policies on: each entry, plus the known tools a glob entry matches. */
function probesFor(tools: readonly string[]): string[] {
  const probes = new Set<string>();
  for (const tool of tools) {
    probes.add(tool);
    if (hasGlobSyntax(tool)) for (const known of KNOWN_TOOLS) if (micromatch.isMatch(known, tool, { dot: true })) probes.add(known);
  }
  return [...probes];
}
