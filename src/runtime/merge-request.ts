import { writeTextAtomic } from '../storage/atomic';
import { MERGE_TOOL, type ApprovalQueue, type ApprovalRequest, type MergeInput } from '../authz/approvals';
import { messageOf } from '../errors';
import type { Worktrees } from '../worktrees/service';
import type { MergeCheck, Work } from '../worktrees/merge';
import type { Journal } from './journal';
import type { ApproverPolicy, AuditSink, BeforeBatch } from './ports';
import type { Turn, TurnOutcome } from './turn';
import { rejectionText } from './format';
import { ISOLATION_MARK, type IsolationPrepared } from '../model/isolation';

/**
 * Worktree isolation in the runtime (docs/worktrees.md): preparing an isolated session's worktree
 * before its turn, and after the turn the merge request that brings its work back — an approval
 * request `merge` raised by the session's own turn, so it climbs the chain like any request.
 * Approve applies the work to the workspace's working tree (uncommitted, three-way, after a
 * checkpoint); reject keeps it on the branch; a conflict is raised marked (it cannot be
 * approved) and told to the caller, whose next message to the session rebases it.
 */
export interface Isolation {
  /** Where a session's tools are rooted when it is isolated (a map lookup: nothing else for other turns). */
  rootOf(sessionId: string): string | undefined;
  /**
   * Make the session's worktree ready for a message (`requested`: the caller's / participant's / config's
   * choice). Returns the text that tells the agent where it works (empty when not isolated), or an error.
   */
  prepare(sessionId: string, participantId: string, requested: 'worktree' | 'none'): Promise<IsolationPrepared>;
  /** After an isolated session's turn: its merge request, decided; the outcome says what happened. */
  afterTurn(turn: Turn, outcome: TurnOutcome): Promise<TurnOutcome>;
}

export interface IsolationDeps {
  readonly worktrees: Worktrees;
  readonly approvals: ApprovalQueue;
  readonly approvers: ApproverPolicy;
  readonly askers: Map<string, Turn>;
  route(asker: Turn, request: ApprovalRequest): void;
  readonly audit: AuditSink;
  readonly notice: Journal['notice'];
  readonly setStatus: Journal['setStatus'];
  /** Checkpoint before the merge writes the workspace (docs/undo.md). */
  readonly beforeBatch?: BeforeBatch;
  /** Where a session's merge diff is kept for the approval view (layout `worktreeDiff`). */
  diffFile(sessionId: string): string;
  newId(): string;
  /**
   * Whether only a person may make this change of the merge (personOnly of the rules' verdict for
   * the asker writing or deleting `path` in the workspace: `git-internals-ask` names the user).
   * Required: a merge is Legion writing the agent's files, and an agent approver must not pass
   * what a file tool could not without a person.
   */
  onlyAPerson(turn: Turn, path: string, deleted: boolean): boolean;
}

/** Diff text an agent approver reads in the request (the full diff is in the approval view). */
export const MERGE_DIFF_CAP = 20_000;

export function createIsolation(deps: IsolationDeps): Isolation {
  const { worktrees, approvals } = deps;
  /** The pending conflict request of a session: withdrawn when the session is rebased. */
  const conflicts = new Map<string, string>();

  const prepare: Isolation['prepare'] = async (sessionId, participantId, requested) => {
    const isolated = worktrees.rootOf(sessionId) !== undefined;
    if (requested === 'none' && !isolated) return { ok: true, note: '' };
    if (requested === 'none') return { ok: false, kind: 'failed', error: `refused: session ${sessionId} works in a git worktree; use another sessionName for work without isolation` };
    const result = await worktrees.isolate(sessionId, participantId);
    if (!result.ok) return { ok: false, kind: result.kind, error: `refused: ${result.error}. Send the message without isolation, or ask the user to make the workspace a git repository.` };
    const { record, how } = result;
    const pendingConflict = conflicts.get(sessionId);
    if (pendingConflict) {
      approvals.withdraw([pendingConflict], 'superseded: the session was rebased onto the workspace');
      conflicts.delete(sessionId);
    }
    const where =
      `${ISOLATION_MARK} You work in your own git worktree at ${record.root} (branch ${record.branch}): a copy of the workspace ` +
      `as it was when this message was sent, uncommitted changes included. Your file tools and shell act there; relative paths ` +
      `resolve there. Nothing you change reaches the workspace until your caller approves the merge request made of your ` +
      `changes when you finish. Do not commit; just leave your changes in the worktree.`;
    const rebased = how === 'rebased'
      ? `\n[rebase] Your worktree was brought up to date with the workspace. Your work conflicted with it in ` +
        `${(record.conflicts ?? []).join(', ') || 'some files'}: those files now hold conflict markers (<<<<<<< ======= >>>>>>>). ` +
        `Resolve them (keep both intentions), then finish: the merge request is made again.`
      : '';
    return { ok: true, note: where + rebased };
  };

  const raise = (turn: Turn, work: Work, conflict: MergeCheck & { kind: 'conflict' } | undefined): ApprovalRequest => {
    const chain = [...turn.chain];
    const diff = conflict ? conflict.hunks : work.diff;
    const input: MergeInput & { diff: string } = {
      session: turn.session.id,
      branch: `legion/${turn.session.id}`,
      files: work.files,
      diffstat: work.diffstat,
      ...(conflict ? { conflict: [...conflict.files] } : {}),
      diff: diff.length > MERGE_DIFF_CAP ? `${diff.slice(0, MERGE_DIFF_CAP)}\n[diff cut at ${MERGE_DIFF_CAP} characters]` : diff,
    };
    const names = work.files.map((f) => f.path).join(', ');
    const reason = conflict
      ? `conflict in ${conflict.files.join(', ')}: ${turn.agent.id}'s work and the workspace changed the same lines; cannot be approved (reject it, or message ${turn.agent.id} again to rebase)`
      : `merge ${turn.agent.id}'s work from its worktree into the workspace (uncommitted): ${work.diffstat} (${names})`;
    const [request] = approvals.raise([{
      sessionId: turn.session.id,
      participantId: turn.agent.id,
      chain,
      toolUseId: `merge-${deps.newId()}`,
      toolName: MERGE_TOOL,
      input,
      ruleId: null,
      reason,
      approverId: deps.approvers.choose({ chain, toolName: MERGE_TOOL, personOnly: work.files.some((f) => deps.onlyAPerson(turn, f.path, f.status === 'deleted')) }),
    }]);
    return request!;
  };

  const conflictText = (turn: Turn, check: MergeCheck & { kind: 'conflict' }): string => {
    const excerpt = check.hunks.length > 2000 ? `${check.hunks.slice(0, 2000)}\n[…]` : check.hunks;
    return `conflict in ${check.files.join(', ')}: ${turn.agent.id}'s work (branch legion/${turn.session.id}) and the workspace changed the same lines; ` +
      `nothing was merged. To rebase, send ${turn.agent.id} another message in the same session: its worktree is brought up to date ` +
      `with the workspace and it resolves the conflict markers.\n${excerpt}`;
  };

  const reportConflict = async (turn: Turn, work: Work, check: MergeCheck & { kind: 'conflict' }): Promise<string> => {
    await worktrees.conflict(turn.session.id, check);
    await writeTextAtomic(deps.diffFile(turn.session.id), check.hunks, { sync: false });
    const request = raise(turn, work, check);
    conflicts.set(turn.session.id, request.requestId);
    return conflictText(turn, check);
  };

  const decide = async (turn: Turn, work: Work, first: MergeCheck): Promise<string> => {
    const sessionId = turn.session.id;
    const signal = turn.controller.signal;
    if (first.kind === 'conflict') return reportConflict(turn, work, first);
    await writeTextAtomic(deps.diffFile(sessionId), work.diff, { sync: false });
    const request = raise(turn, work, undefined);
    deps.askers.set(request.requestId, turn);
    deps.setStatus(turn.slot, 'waiting-approval', 'merge request');
    deps.route(turn, request);
    const outcome = await approvals.wait(request.requestId, signal);
    deps.askers.delete(request.requestId);
    deps.audit({
      sessionId, participantId: turn.agent.id, chain: turn.chain, toolName: MERGE_TOOL, input: request.input,
      decision: outcome.decision, decidedBy: outcome.decidedBy, ruleId: null, reason: outcome.reason, requestId: request.requestId,
    });
    if (outcome.decision !== 'approved') {
      await worktrees.settle(sessionId, outcome.decidedBy === 'cancel' ? 'working' : 'rejected', outcome.reason);
      return `merge ${rejectionText(outcome)}; the work stays on branch legion/${sessionId} until pruned`;
    }
    // The workspace may have changed while the request waited: merge against what it holds now
    // (one merge at a time), after a checkpoint so that undo takes it back (docs/undo.md).
    deps.setStatus(turn.slot, 'running-tool', 'merge');
    const merged = await worktrees.merge(sessionId, work, async () => deps.beforeBatch?.({
      sessionId, participantId: turn.agent.id, messages: turn.session.messages(),
      calls: [{ toolUseId: request.toolUseId, name: MERGE_TOOL, changesFiles: true }],
    }));
    if (merged.kind === 'conflict') return reportConflict(turn, work, merged);
    if (merged.kind === 'failed') return `merge failed: ${merged.error} (the work stays on branch legion/${sessionId})`;
    return `merged into the workspace (uncommitted): ${work.diffstat} — ${work.files.map((f) => f.path).join(', ')}`;
  };

  return {
    rootOf: (sessionId) => worktrees.rootOf(sessionId),
    prepare,
    async afterTurn(turn, outcome) {
      const sessionId = turn.session.id;
      if (worktrees.rootOf(sessionId) === undefined || outcome.kind === 'interrupted') return outcome;
      let merge: string;
      try {
        const collected = await worktrees.collectChecked(sessionId);
        merge = collected ? await decide(turn, collected.work, collected.check) : 'no changes in its worktree: nothing to merge';
      } catch (error) {
        merge = `its work could not be merged: ${messageOf(error)} (it stays in .legion/worktrees/${sessionId})`;
        deps.notice('error', `merge of ${sessionId}: ${messageOf(error)}`, sessionId);
      }
      deps.setStatus(turn.slot, 'idle');
      return { ...outcome, merge };
    },
  };
}
