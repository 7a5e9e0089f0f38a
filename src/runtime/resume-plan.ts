import { USER_ID } from '../collective/participant';
import type { ApprovalRequest } from '../authz/approvals';
import type { ToolUseBlock } from '../model/message';
import { DEFAULT_SESSION_NAME } from '../session/ids';
import type { OpenCalls } from '../session/types';

/**
 * Which open batches a restart can resume (pure; used by the composition root before the run
 * is loaded, and by the core after). A request pending in approvals.jsonl resumes when its
 * whole call chain can be rebuilt from disk:
 * - the asking session's last message is the open batch holding the asked call (stage
 *   `approvals`: the batch was waiting on its requests, so none of its calls ran);
 * - each caller up the chain (`request.chain`) has exactly one open batch holding the
 *   communicator call into the session below (stage `running`: that batch was running and
 *   waiting on the delegation), and no pending request of its own;
 * - the chain starts with the user's lane (`user → agent`), every agent on it is active.
 * A caller whose communicator call was already answered (e.g. "interrupted") breaks the
 * chain: the request expires instead.
 */

export type ResumeStage = 'approvals' | 'running';

export interface ChainNode {
  readonly open: OpenCalls;
  readonly stage: ResumeStage;
  /** Communicator tool_use id of this batch → the session left open it waits on. */
  readonly children: Map<string, string>;
}

/** Was `request` raised by the responder of `open` for one of its open calls, on a chain ending `initiator → responder`? */
export function raisedFor(request: ApprovalRequest, open: OpenCalls): boolean {
  const chain = request.chain;
  return request.sessionId === open.sessionId && request.participantId === open.key.responderId && open.toolUseIds.includes(request.toolUseId)
    && chain.length >= 2 && chain[0] === USER_ID && chain[chain.length - 1] === open.key.responderId && chain[chain.length - 2] === open.key.initiatorId;
}

/** The session a communicator call talks to: its target and session name. */
export function communicatorTarget(use: ToolUseBlock): { targetId: string; name: string } | null {
  if (use.name !== 'communicator' || typeof use.input !== 'object' || use.input === null) return null;
  const input = use.input as Record<string, unknown>;
  if (typeof input.targetId !== 'string') return null;
  return { targetId: input.targetId, name: typeof input.sessionName === 'string' ? input.sessionName : DEFAULT_SESSION_NAME };
}

/** The sessions left open (by id) of every resumable chain, see above. */
export function resumableChains(pending: readonly ApprovalRequest[], open: readonly OpenCalls[], isActiveAgent: (id: string) => boolean): Map<string, ChainNode> {
  const byId = new Map(open.map((o) => [o.sessionId, o]));
  const asking = new Set<string>();
  for (const request of pending) {
    const o = byId.get(request.sessionId);
    if (o && raisedFor(request, o)) asking.add(o.sessionId);
  }
  const nodes = new Map<string, ChainNode>();
  for (const request of pending) {
    const leaf = byId.get(request.sessionId);
    if (!leaf || !raisedFor(request, leaf) || !isActiveAgent(leaf.key.responderId)) continue;
    const path: { open: OpenCalls; stage: ResumeStage; link?: readonly [string, string] }[] = [{ open: leaf, stage: 'approvals' }];
    const chain = request.chain;
    let child = leaf;
    let ok = true;
    // `child` is chain[i] → chain[i + 1]; its caller's session is chain[i - 1] → chain[i].
    for (let i = chain.length - 2; i >= 1; i--) {
      const links = open
        .filter((o) => o.key.initiatorId === chain[i - 1] && o.key.responderId === chain[i] && !asking.has(o.sessionId))
        .flatMap((o) => o.uses.filter((u) => {
          const target = communicatorTarget(u);
          return target !== null && target.targetId === child.key.responderId && target.name === child.key.name;
        }).map((u) => ({ o, useId: u.id })));
      if (links.length !== 1 || !isActiveAgent(chain[i]!)) {
        ok = false;
        break;
      }
      const link = links[0]!;
      path.push({ open: link.o, stage: 'running', link: [link.useId, child.sessionId] });
      child = link.o;
    }
    if (!ok || child.key.initiatorId !== USER_ID) continue;
    for (const step of path) {
      const node = nodes.get(step.open.sessionId) ?? { open: step.open, stage: step.stage, children: new Map<string, string>() };
      if (step.link) node.children.set(step.link[0], step.link[1]);
      nodes.set(step.open.sessionId, node);
    }
  }
  return nodes;
}

/** The `leaveOpen` option of `RunStore.load`, from the requests pending in approvals.jsonl (`readPendingApprovals`). */
export function leaveOpenFor(pending: readonly ApprovalRequest[], isActiveAgent: (id: string) => boolean): (open: readonly OpenCalls[]) => ReadonlySet<string> {
  return (open) => new Set(resumableChains(pending, open, isActiveAgent).keys());
}
