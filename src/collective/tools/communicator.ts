import { z } from 'zod';
import type { Tool } from '../../tools/types';
import type { CollectiveToolDeps } from './deps';
import { lazySchema } from '../../storage/lazy-schema';

const schema = lazySchema(() =>
  z.strictObject({
    targetId: z.string().min(1).describe('id of the participant to talk to (an agent, or "user" to ask the human)'),
    message: z.string().min(1).describe('a self-contained message: goal, relevant paths, constraints, what to report back'),
    sessionName: z.string().min(1).optional().describe('names the conversation (default "default"); different names run in parallel'),
    isolation: z.enum(['worktree', 'none']).optional().describe(
      '"worktree": the target works in its own git worktree (a copy of the workspace, uncommitted changes included) and its ' +
      'changes come back as one merge request when it finishes; use it for parallel work that writes files. Default: the ' +
      "target's own setting, else the config's isolation.default"),
  }),
);

/** Talk to another participant; the result is its final answer (docs/design.md#participants-sessions-runs and #tools). */
export function createCommunicatorTool(deps: Pick<CollectiveToolDeps, 'communicate'>): Tool<z.infer<ReturnType<typeof schema>>> {
  return {
    name: 'communicator',
    startsTurns: true,
    description:
      'Send a message to another participant of the collective and wait for its answer. Each (you, target, sessionName) ' +
      'is its own conversation that remembers earlier messages; use different session names for parallel work. ' +
      'targetId "user" asks the human and waits for the reply.',
    get schema() {
      return schema();
    },
    keyArgument: (input) => `${input.targetId}${input.sessionName && input.sessionName !== 'default' ? ` · ${input.sessionName}` : ''}: ${input.message}`,
    // The collective's writes are under .legion/, never the workspace's files.
    keepsWorkspaceFiles: true,
    execute: (input, context) => deps.communicate(context, input),
  };
}
