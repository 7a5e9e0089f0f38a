import { z } from 'zod';
import type { Tool } from '../../tools/types';
import { modifySpecSchema } from '../registry';
import { outcome } from './registry-result';
import type { CollectiveToolDeps } from './deps';

/** Change an agent's fields (id plus any spawn field). */
export function createModifyAgentTool(deps: Pick<CollectiveToolDeps, 'registry'>): Tool<z.input<ReturnType<typeof modifySpecSchema>>> {
  return {
    name: 'modify_agent',
    description: 'Change an existing agent: give its id and only the fields to change (same fields as spawn_agent).',
    get schema() {
      return modifySpecSchema();
    },
    keyArgument: (input) => input.id,
    // The collective's writes are under .legion/, never the workspace's files.
    keepsWorkspaceFiles: true,
    async execute(input, context) {
      return outcome(await deps.registry.modify(context.participantId, input), 'modify', String(input.id));
    },
  };
}
