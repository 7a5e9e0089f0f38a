/** The approval queue (DESIGN §7.4, §4): persisted requests, batch resolution, restart. */
export { createApprovalQueue, EXPIRED_REASON, CANCELLED_REASON, SHUTDOWN_REASON } from './queue';
export type { ApprovalQueue, ApprovalQueueOptions, RaiseInput, QueueResult } from './queue';
export type { ApprovalRequest, ApprovalOutcome, ApprovalRecord } from './state';
export type { Clock, IdSource } from './deps';
export { approvalLineSchema } from './schema';
export { readPendingApprovals } from './load';
export type { ApprovalLine, FinalDecision } from './schema';
