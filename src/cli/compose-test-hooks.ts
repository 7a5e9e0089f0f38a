import type { ApprovalQueue } from '../authz/approvals';
import type { CollectiveRegistry } from '../collective/registry';
import type { Provider } from '../providers/types';
import type { Triage } from '../runtime/ports';
import type { Layout } from '../storage/layout';
import type { Tool } from '../tools/types';

/**
 * What the integration tests may put into the real composition root (`composeApp`) and no
 * user can (no flag or config key reaches it): a provider instance that records its requests,
 * tools the tests define, a scripted triage, and a look at the parts tests assert on. Every
 * other part (config layers, rules, prices, stores, audit) comes from the temp workspace's
 * files, as for a user.
 */
export interface ComposeTestHooks {
  /** Every agent's provider and model (instead of what the config selects). */
  readonly provider?: { readonly provider: Provider; readonly model: string };
  /** Added to the built-in and collective tools. */
  readonly tools?: readonly Tool[];
  /** Replaces the LLM triage `escalation.llm` would configure. */
  readonly triage?: Triage;
  /** Called once the approval queue and the collective registry exist. */
  readonly onParts?: (parts: { readonly approvals: ApprovalQueue; readonly registry: CollectiveRegistry; readonly layout: Layout }) => void;
}
