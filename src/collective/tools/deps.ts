import type { ToolCatalog, ToolContext, ToolResult } from '../../tools/types';
import type { CollectiveRegistry } from '../registry';
import type { RecallDeps } from '../../context/recall-tool';

export interface ResolveApprovalInput {
  readonly requestId: string;
  readonly decision: 'approved' | 'rejected';
  readonly reason?: string;
}

export interface CommunicateInput {
  readonly targetId: string;
  readonly message: string;
  readonly sessionName?: string;
  /** Work in a git worktree (docs/worktrees.md); default: the target's `isolation`, else `isolation.default`. */
  readonly isolation?: 'worktree' | 'none';
}

/**
 * What the collective tools are built with (createCollectiveTools): the runtime core builds them
 * (runtime/core.ts) with its registry, its whole catalog and its communicator. Each tool takes
 * only the part it uses.
 */
export interface CollectiveToolDeps extends RecallDeps {
  readonly registry: CollectiveRegistry;
  /** The run's whole catalog (list_tools), read at call time. */
  readonly tools: ToolCatalog;
  communicate(context: ToolContext, input: CommunicateInput): Promise<ToolResult>;
  resolveApproval(context: ToolContext, input: ResolveApprovalInput): ToolResult;
}
