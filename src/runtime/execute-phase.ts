import type { ToolResultBlock } from '../model/message';
import { mayChangeFiles, type ToolContext, type ToolResult } from '../tools/types';
import { messageOf } from '../errors';
import { failed, type Batch } from './call-state';
import type { ResumePrepass } from './resume-prepass';
import type { AfterCall, BeforeBatch, ExecuteTool } from './ports';
import type { Turn } from './turn';
import { runScheduled } from './parallel';
import { interruptedText } from './format';

/**
 * Phase 3 of a batch: run every `run` call (independent calls in parallel, see parallel.ts),
 * then close the batch. Never throws: a throwing tool gives a `failed` result.
 */
export interface ExecutePhase {
  runCalls(turn: Turn, batch: Batch): Promise<void>;
  /**
   * Every call still without a result is answered "interrupted"; a re-attachment of a resumed
   * batch that was not taken (the call did not run) abandons the resumed turn below it.
   * Returns one result per call, in call order.
   */
  close(turn: Turn, batch: Batch): ToolResultBlock[];
}

export interface ExecuteDeps {
  readonly workspaceRoot: string;
  readonly executeTool: ExecuteTool;
  toolContext(turn: Turn, toolUseId: string): ToolContext;
  isStopping(): boolean;
  /** What a restart left to do when a resumed batch closes (resume-prepass.ts). */
  readonly closingResumed: ResumePrepass['closing'];
  /** Checkpoint hook around the calls that run (docs/undo.md). */
  readonly beforeBatch?: BeforeBatch;
  /** After each call that ran: notes for the agent, added to the batch's (nested instructions, PostToolUse hooks). */
  readonly afterCall?: AfterCall;
  /** The worktree of an isolated session (docs/worktrees.md): its batches run there, and are checkpointed there (`root`). */
  readonly isolatedRoot?: (sessionId: string) => string | undefined;
}

export function createExecutePhase(deps: ExecuteDeps): ExecutePhase {
  return {
    async runCalls(turn, batch) {
      const signal = turn.controller.signal;
      const runs = batch.of('run');
      const isolated = deps.isolatedRoot?.(turn.session.id);
      const ran = runs.length > 0 && !signal.aborted ? await deps.beforeBatch?.({
        sessionId: turn.session.id, participantId: turn.agent.id, messages: turn.session.messages(), ...(isolated !== undefined ? { root: isolated } : {}),
        calls: runs.map((c) => ({ toolUseId: c.use.id, name: c.use.name, changesFiles: mayChangeFiles(c.tool) })),
      }) : undefined;
      await runScheduled(isolated ?? deps.workspaceRoot, runs, signal, async (call) => {
        let result: ToolResult;
        try {
          result = await deps.executeTool(call.tool, call.input, deps.toolContext(turn, call.use.id));
        } catch (error) {
          result = failed('failed', `${call.use.name} failed: ${messageOf(error)}`);
        }
        if (signal.aborted) return;
        batch.end(call.use, result);
        if (!deps.afterCall) return;
        const key = turn.session.key;
        const notes = await deps.afterCall(
          { sessionId: turn.session.id, participantId: turn.agent.id, initiatorId: key.initiatorId, chain: turn.chain, history: () => turn.session.messages() },
          { toolName: call.use.name, toolUseId: call.use.id, input: call.input, pathFields: call.tool.pathFields ?? [] },
          result, signal,
        );
        for (const note of notes) if (!batch.notes.includes(note)) batch.notes.push(note);
      });
      await ran?.();
    },

    close(_turn, batch) {
      const stopping = deps.isStopping();
      deps.closingResumed(batch, stopping);
      const reason = interruptedText(stopping);
      for (const call of batch.calls) if (call.phase !== 'done') batch.end(call.use, failed('interrupted', reason));
      return batch.results();
    },
  };
}
