import { z } from 'zod';
import type { Tool } from '../../tools/types';
import type { CollectiveToolDeps } from './deps';
import { lazySchema } from '../../storage/lazy-schema';

const schema = lazySchema(() =>
  z.strictObject({
    requestId: z.string().min(1).describe('the id of a pending approval request addressed to you (e.g. "apr-3")'),
    decision: z.enum(['approved', 'rejected']),
    reason: z.string().optional().describe('one line the asking agent will read'),
  }),
);

/** An agent approver decides one request delivered to it (docs/design.md#authorization, step 4). */
export function createResolveApprovalTool(deps: Pick<CollectiveToolDeps, 'resolveApproval'>): Tool<z.infer<ReturnType<typeof schema>>> {
  return {
    name: 'resolve_approval',
    description:
      'Approve or reject one pending approval request that was delivered to you in a communicator result. ' +
      'Call it once per request. Requests you leave undecided go to the next approver when your turn ends.',
    get schema() {
      return schema();
    },
    keyArgument: (input) => `${input.requestId} ${input.decision}`,
    // The collective's writes are under .legion/, never the workspace's files.
    keepsWorkspaceFiles: true,
    execute: async (input, context) => deps.resolveApproval(context, input),
  };
}
