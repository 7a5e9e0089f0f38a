import { z } from 'zod';
import type { Tool } from '../../tools/types';
import { outcome } from './registry-result';
import type { CollectiveToolDeps } from './deps';
import { lazySchema } from '../../storage/lazy-schema';

const retireSchema = lazySchema(() =>
  z.strictObject({ id: z.string().min(1) }),
);

/** Retire an agent: it stays in the record but takes no more messages. */
export function createRetireAgentTool(deps: Pick<CollectiveToolDeps, 'registry'>): Tool<z.infer<ReturnType<typeof retireSchema>>> {
  return {
    name: 'retire_agent',
    description: 'Retire an agent: it keeps its history but takes no more messages. The user and ur-agent cannot be retired.',
    get schema() {
      return retireSchema();
    },
    keyArgument: (input) => input.id,
    // The collective's writes are under .legion/, never the workspace's files.
    keepsWorkspaceFiles: true,
    async execute(input, context) {
      return outcome(await deps.registry.retire(context.participantId, input.id), 'retire', input.id);
    },
  };
}
