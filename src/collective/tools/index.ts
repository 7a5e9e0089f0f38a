import type { Tool } from '../../tools/types';
import { createCommunicatorTool } from './communicator';
import { createListParticipantsTool } from './list-participants';
import { createListToolsTool } from './list-tools';
import { createSpawnAgentTool } from './spawn-agent';
import { createModifyAgentTool } from './modify-agent';
import { createRetireAgentTool } from './retire-agent';
import { createResolveApprovalTool } from './resolve-approval';
import { createRecallTool } from '../../context/recall-tool';
import type { CollectiveToolDeps } from './deps';

export type { CollectiveToolDeps, CommunicateInput, ResolveApprovalInput } from './deps';

/** The collective tools (docs/design.md#tools), built with what they use (the runtime core passes it: runtime/core.ts). */
export function createCollectiveTools(deps: CollectiveToolDeps): Tool[] {
  return [
    createCommunicatorTool(deps), createListParticipantsTool(deps), createListToolsTool(deps), createSpawnAgentTool(deps),
    createModifyAgentTool(deps), createRetireAgentTool(deps), createResolveApprovalTool(deps), createRecallTool(deps),
  ];
}
