/** The approval queue (docs/design.md#authorization, step 4 and #files-on-disk): persisted requests, batch resolution, restart. */
export { createApprovalQueue, EXPIRED_REASON, CANCELLED_REASON, SHUTDOWN_REASON } from './queue';
export type { ApprovalQueue, ApprovalQueueOptions, RaiseInput, QueueResult } from './queue';
export type { ApprovalRequest, ApprovalOutcome, ApprovalRecord } from './state';
export type { Clock, IdSource } from './deps';
export { approvalLineSchema } from './schema';
export { readPendingApprovals } from './load';
export type { ApprovalLine, FinalDecision } from './schema';
export { MERGE_TOOL, mergeConflictOf, type MergeInput } from './merge-input';
