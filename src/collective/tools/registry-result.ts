import type { ToolResult } from '../../tools/types';
import type { RefusalKind, RegistryResult } from '../registry';

export type RegistryVerb = 'spawn' | 'modify' | 'retire';

const DONE: Record<RegistryVerb, string> = { spawn: 'spawned', modify: 'modified', retire: 'retired' };
const NOTHING: Record<RegistryVerb, string> = {
  spawn: 'no agent was created',
  modify: 'the agent was not changed',
  retire: 'the agent was not retired',
};

/** What to do instead of a refused change, by why it was refused. */
const INSTEAD: Record<RefusalKind, string> = {
  caller: 'report this to your caller; you cannot change the collective',
  'invalid-input': 'fix that field and call again',
  exists: 'use modify_agent to change the existing agent, or pick another id',
  'not-found': 'check the id with list_participants',
  'not-agent': 'only agents can be changed; check the id with list_participants',
  retired: 'spawn a new agent under another id if the job still needs one',
  'unknown-tools': 'use only tool names from list_tools',
  grant:
    'call again granting only tools and approvalAuthority you hold yourself (list_participants shows yours), ' +
    'or tell your caller that the user must grant the rest',
  protected: 'leave it in place and tell your caller why',
  'save-failed': 'call again; if it fails again, report the error to your caller',
};

/**
 * The tool result of a spawn/modify/retire. A refusal starts with `REFUSED`, says that nothing
 * changed and what to do instead, so no model can read it as a success.
 */
export function outcome(result: RegistryResult, verb: RegistryVerb, targetId: string): ToolResult {
  if (!result.ok) {
    return {
      content: `REFUSED: ${verb}_agent "${targetId}": ${result.error}. Nothing changed: ${NOTHING[verb]}. Instead: ${INSTEAD[result.kind]}.`,
      summary: `refused: ${result.error}`,
      isError: true,
    };
  }
  const p = result.participant;
  const tools = p.kind === 'agent' ? `; tools: ${p.tools.join(', ') || '(none)'}` : '';
  return { content: `${DONE[verb]} ${p.id}${tools}`, summary: `${DONE[verb]} ${p.id}` };
}
