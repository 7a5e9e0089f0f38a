import { z } from 'zod';
import type { Tool } from '../../tools/types';
import { spawnSpecSchema } from '../registry';
import { outcome } from './registry-result';
import type { CollectiveToolDeps } from './deps';

/** Create an agent; usable at once. No participant can grant more than it holds. */
export function createSpawnAgentTool(deps: Pick<CollectiveToolDeps, 'registry'>): Tool<z.input<ReturnType<typeof spawnSpecSchema>>> {
  return {
    name: 'spawn_agent',
    description:
      'Create a new agent. id: short lowercase id; systemPrompt: its job description; tools: the narrowest set it needs ' +
      '(see list_tools); without tools it gets communicator and list_participants, so it can talk to others. ' +
      'provider/model default to the run\'s. isolation "worktree": its sessions work in their own git worktree and their changes ' +
      'come back as one merge request. You cannot grant tools or approvalAuthority you do not hold.',
    get schema() {
      return spawnSpecSchema();
    },
    keyArgument: (input) => input.id,
    // The collective's writes are under .legion/, never the workspace's files.
    keepsWorkspaceFiles: true,
    async execute(input, context) {
      return outcome(await deps.registry.spawn(context.participantId, input), 'spawn', String(input.id));
    },
  };
}
