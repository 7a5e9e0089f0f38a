import type { LegionConfig } from '../config/schema';
import type { EventBus } from '../events/bus';
import type { SessionStore } from '../session/types';
import type { SecretScrubber } from '../authz/scrub';
import type { CollectiveRegistry } from '../collective/registry';
import type { ApprovalQueue } from '../authz/approvals';
import type {
  AddAllowance, ApproverPolicy, AuditSink, Authorize, DenialTracker, ExecuteTool, PriceOf, ResolveProvider, ToolCatalog, Triage,
} from './ports';

/** Headless approvals (`legion run --approve`): what would reach the user is decided at once. */
export interface HeadlessMode {
  readonly approve: 'deny' | 'all';
}

/** Everything the runtime works with, resolved (defaults applied) by `createCore`. */
export interface RuntimeEnv {
  readonly config: LegionConfig;
  readonly workspaceRoot: string;
  readonly runId: string;
  readonly bus: EventBus;
  readonly sessions: SessionStore;
  readonly registry: CollectiveRegistry;
  readonly tools: ToolCatalog;
  readonly executeTool: ExecuteTool;
  readonly resolveProvider: ResolveProvider;
  readonly authorize: Authorize;
  readonly approvals: ApprovalQueue;
  readonly approvers: ApproverPolicy;
  readonly audit: AuditSink;
  readonly denials?: DenialTracker;
  readonly triage?: Triage;
  readonly priceOf?: PriceOf;
  readonly addAllowance?: AddAllowance;
  readonly clock: () => Date;
  readonly headless?: HeadlessMode;
  /** Known secrets (API keys) kept out of histories and streamed text (see authz/scrub.ts). */
  readonly scrub: SecretScrubber;
}
