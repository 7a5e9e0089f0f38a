import { homedir } from 'node:os';
import type { LegionConfig } from '../config/schema';
import type { EventBus } from '../events/bus';
import type { Layout } from '../storage/layout';
import { appendJsonl } from '../storage/jsonl';
import type { CollectiveRegistry } from '../collective/registry';
import type { RuleSet } from '../authz/rules/rule-set';
import { createAuthorizer, workspaceRealPath } from '../authz/authorizer';
import { allowancesFile, createAllowanceSet, readAllowances } from '../authz/allowances';
import { createAuditLog } from '../authz/audit';
import { createTriage } from '../authz/triage';
import { workspaceHooksPaths } from '../tools/sandbox/git-guard';
import type { ProviderRegistry } from '../providers/select';
import type { AddAllowance, AuditSink, Authorize, Triage } from '../runtime/ports';
import type { WorkspaceTrust } from '../storage/workspace-trust';

/**
 * Authorization wiring of one run: rules + policies + session allowances (persisted in
 * `runs/<runId>/allowances.jsonl`), the audit sink, the optional LLM triage.
 */
export interface AuthzParts {
  readonly authorize: Authorize;
  readonly addAllowance: AddAllowance;
  readonly audit: AuditSink;
  readonly triage?: Triage;
  readonly warnings: string[];
}

export async function composeAuthz(options: {
  readonly config: LegionConfig;
  readonly layout: Layout;
  readonly runId: string;
  readonly workspaceRoot: string;
  readonly ruleSet: RuleSet;
  readonly registry: CollectiveRegistry;
  readonly providers: ProviderRegistry;
  readonly bus: EventBus;
  readonly secrets: readonly string[];
  /** Secret scrubbing of what is persisted (allowances). */
  readonly scrub?: <T>(value: T) => T;
  readonly clock: () => Date;
  /** Allowances saved in the run are re-read only in a trusted workspace (docs/workspace-trust.md); new ones are saved either way. */
  readonly trust: WorkspaceTrust;
  /** The environment the user's git runs with (HOME, XDG_CONFIG_HOME, GIT_CONFIG_GLOBAL…): which git config the file tools guard. */
  readonly env: NodeJS.ProcessEnv;
}): Promise<AuthzParts> {
  const { layout, runId, workspaceRoot, registry, bus, config } = options;
  const warnings: string[] = [];
  const file = allowancesFile(layout, runId);
  const read = options.trust.trusted ? await readAllowances(file) : { allowances: [], issues: [] };
  warnings.push(...read.issues);
  const scrub = options.scrub ?? (<T>(value: T): T => value);
  const allowances = createAllowanceSet({ initial: read.allowances, onAdd: (allowance) => appendJsonl(file, scrub(allowance)) });
  const realPath = workspaceRealPath(workspaceRoot);
  const authorize = createAuthorizer({ ruleSet: options.ruleSet, getParticipant: (id) => registry.get(id), workspaceRoot, allowances, realPath, homeDir: homedir(), gitConfigPaths: (root) => workspaceHooksPaths(root, options.env) });

  const log = createAuditLog(layout, options.clock, { secrets: options.secrets });
  let auditFailed = false;
  const audit: AuditSink = (entry) => {
    const written = log.record({ ...entry, runId });
    if (!written.ok && !auditFailed) {
      auditFailed = true; // one notice, not one per call
      bus.emit({ type: 'notice', level: 'error', message: written.error });
    }
  };

  const addAllowance: AddAllowance = (request) => {
    const added = allowances.add(
      { toolName: request.toolName, input: request.input, participantId: request.participantId, sessionId: request.sessionId, chain: request.chain },
      workspaceRoot,
      { grantedBy: 'user', at: options.clock() },
    );
    return added.ok ? null : added.error;
  };

  let triage: Triage | undefined;
  const llm = config.escalation.llm;
  if (llm.enabled) {
    const providerId = llm.provider && llm.provider !== 'auto' ? llm.provider : options.providers.providerId;
    const got = options.providers.get(providerId);
    if (got.ok) {
      triage = createTriage({ provider: got.provider, model: llm.model ?? options.providers.model, minConfidence: llm.minConfidence, secrets: options.secrets });
    } else {
      warnings.push(`escalation.llm: ${got.error}; LLM triage is off`);
    }
  }
  return { authorize, addAllowance, audit, ...(triage ? { triage } : {}), warnings };
}
