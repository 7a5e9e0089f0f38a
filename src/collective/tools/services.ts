import type { ToolCatalog, ToolContext, ToolResult } from '../../tools/types';
import type { CollectiveRegistry } from '../registry';

export interface ResolveApprovalInput {
  readonly requestId: string;
  readonly decision: 'approved' | 'rejected';
  readonly reason?: string;
}

/**
 * What the collective tools get through `ToolContext.services` (set by the runtime core).
 * Plain tool tests run without it: the tools then answer with an error result.
 */
export interface CollectiveServices {
  readonly registry: CollectiveRegistry;
  readonly tools: ToolCatalog;
  communicate(context: ToolContext, input: { targetId: string; message: string; sessionName?: string; isolation?: 'worktree' | 'none' }): Promise<ToolResult>;
  resolveApproval(context: ToolContext, input: ResolveApprovalInput): ToolResult;
}

export const NO_SERVICES: ToolResult = { content: 'this tool needs the Legion runtime (no collective services in this context)', isError: true };

/** The services of a context, or undefined outside the runtime. */
export function servicesOf(context: ToolContext): CollectiveServices | undefined {
  const services = context.services as Partial<CollectiveServices> | undefined;
  return services && typeof services.communicate === 'function' && services.registry ? (services as CollectiveServices) : undefined;
}
