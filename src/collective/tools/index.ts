import type { Tool } from '../../tools/types';
import { communicatorTool } from './communicator';
import { listParticipantsTool } from './list-participants';
import { listToolsTool } from './list-tools';
import { spawnAgentTool } from './spawn-agent';
import { modifyAgentTool } from './modify-agent';
import { retireAgentTool } from './retire-agent';
import { resolveApprovalTool } from './resolve-approval';
import { recallTool } from '../../context/recall-tool';

export type { CollectiveServices, ResolveApprovalInput } from './services';
export { servicesOf } from './services';

/** The collective tools (docs/design.md#tools) (they reach the runtime through `ToolContext.services`). */
export function createCollectiveTools(): Tool[] {
  return [communicatorTool, listParticipantsTool, listToolsTool, spawnAgentTool, modifyAgentTool, retireAgentTool, resolveApprovalTool, recallTool];
}
