import type { ToolResult } from '../../tools/types';
import type { RegistryResult } from '../registry';

/** The tool result of a spawn/modify/retire. */
export function outcome(result: RegistryResult, verb: string): ToolResult {
  if (!result.ok) return { content: `${verb} refused: ${result.error}`, isError: true };
  const p = result.participant;
  const tools = p.kind === 'agent' ? `; tools: ${p.tools.join(', ') || '(none)'}` : '';
  return { content: `${verb} ${p.id}${tools}`, summary: `${verb} ${p.id}` };
}
