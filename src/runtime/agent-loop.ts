import type { ContentBlock, Message, ToolResultBlock } from '../model/message';
import { textOf, toolUsesOf } from '../model/message';
import type { SessionHandle } from '../session/types';
import type { Hub, SessionSlot } from './hub';
import { streamOnce } from './stream';
import { executeBatch, type BatchOutcome } from './executor';
import { collectDelegations } from './delegation';
import { INTERRUPTED_BY_USER, type Turn, type TurnOutcome } from './turn';
import type { ResumePoint } from './resume';

/** The result text of a call cut short: by the user, or by Legion stopping. */
export function interruptedText(hub: Hub): string {
  return hub.stopping ? 'interrupted: Legion stopped while this call was pending; ask again' : INTERRUPTED_BY_USER;
}

/** Answer the open tool_uses of the last message, if any (keeps the history invariant, docs/design.md#message-format). */
export function answerOpenCalls(hub: Hub, session: SessionHandle, reason: string): void {
  const messages = session.messages();
  const last = messages[messages.length - 1];
  if (!last || last.role !== 'assistant') return;
  const uses = toolUsesOf(last);
  if (uses.length === 0) return;
  const content: ToolResultBlock[] = uses.map((u) => ({ type: 'tool_result', toolUseId: u.id, content: reason, isError: true }));
  hub.append(session, { role: 'user', content, at: hub.now() });
}

const textBlocks = (notes: readonly string[]): ContentBlock[] => notes.map((text) => ({ type: 'text', text }));

/**
 * One turn of `turn.agent` in its session (docs/design.md#message-format, issue 4): append the initiator's
 * message, then call the model, run the tool calls of its message (three phases, see
 * executor), append one message with every result, and repeat until a message has no
 * tool calls or `runtime.maxIterations` model calls were made. Never throws; the history
 * is valid whatever happens (every tool_use answered before the turn returns) — except that
 * when Legion stops while the user's lane waits on approvals, the calls are left open on
 * purpose for the next start to resume (`resume`, see resume.ts: the turn starts at its open
 * batch instead of a new message).
 */
export async function runTurn(hub: Hub, slot: SessionSlot, turn: Turn, text: string, resume?: ResumePoint): Promise<TurnOutcome> {
  const { env } = hub;
  const session = turn.session;
  const sessionId = session.id;
  const signal = turn.controller.signal;
  const agentId = turn.agent.id;

  const interrupted = (): TurnOutcome => {
    answerOpenCalls(hub, session, interruptedText(hub));
    hub.setStatus(slot, 'idle');
    if (!hub.stopping) hub.notice('info', `${agentId}: turn interrupted`, sessionId);
    return { kind: 'interrupted' };
  };

  /** Append a batch's results (with news of delegations); an outcome ends the turn. */
  const afterBatch = async (batch: BatchOutcome): Promise<TurnOutcome | undefined> => {
    if (batch.leftOpen) {
      // Legion is stopping while the user's approvals are pending: the calls stay open on disk.
      hub.setStatus(slot, 'idle');
      return { kind: 'interrupted' };
    }
    const notes = signal.aborted ? batch.notes : [...batch.notes, ...(await collectDelegations(hub, slot, turn, false))];
    hub.append(session, { role: 'user', content: [...batch.results, ...textBlocks(notes)], at: hub.now() });
    return signal.aborted ? interrupted() : undefined;
  };

  let lastText = '';
  if (resume) {
    lastText = textOf(resume.message);
    const batch = await executeBatch(hub, slot, turn, toolUsesOf(resume.message), new Map(), resume);
    const ended = await afterBatch({ ...batch, notes: [...batch.notes, ...resume.notes] });
    if (ended) return ended;
  } else {
    answerOpenCalls(hub, session, interruptedText(hub));
    hub.append(session, { role: 'user', content: [{ type: 'text', text }], at: hub.now() });
    if (signal.aborted) return interrupted();
  }

  const choice = env.resolveProvider(turn.agent);
  if (!choice.ok) {
    hub.setStatus(slot, 'error', choice.error);
    hub.notice('error', `${agentId}: ${choice.error}`, sessionId);
    return { kind: 'failed', error: choice.error };
  }

  const max = env.config.runtime.maxIterations;
  for (let iteration = 0; ; iteration++) {
    if (signal.aborted) return interrupted();
    if (iteration >= max) {
      const why = `${agentId} stopped after ${max} model calls without a final answer (runtime.maxIterations)`;
      hub.setStatus(slot, 'idle');
      hub.notice('warn', why, sessionId);
      return { kind: 'done', text: lastText, incomplete: why };
    }
    hub.setStatus(slot, 'thinking');
    const streamed = await streamOnce(hub, turn, choice);
    if (streamed.aborted) {
      const content: ContentBlock[] = streamed.text ? [{ type: 'text', text: streamed.text }] : [];
      content.push(...streamed.toolUses);
      if (content.length > 0) hub.append(session, { role: 'assistant', content, at: hub.now() });
      return interrupted();
    }
    if (streamed.error !== undefined) {
      // Tool calls of a failed message are dropped: they were never authorized nor run.
      if (streamed.text) hub.append(session, { role: 'assistant', content: [{ type: 'text', text: streamed.text }], at: hub.now() });
      hub.setStatus(slot, 'error', streamed.error);
      hub.notice('error', `${agentId}: ${streamed.error}`, sessionId);
      return { kind: 'failed', error: streamed.error };
    }
    const content: ContentBlock[] = streamed.text ? [{ type: 'text', text: streamed.text }] : [];
    content.push(...streamed.toolUses);
    const message: Message = { role: 'assistant', content, at: hub.now() };
    hub.append(session, message);
    if (streamed.text) lastText = streamed.text;

    if (streamed.toolUses.length === 0) {
      const notes = await collectDelegations(hub, slot, turn, true);
      if (signal.aborted) return interrupted();
      if (notes.length > 0) {
        hub.append(session, { role: 'user', content: textBlocks(notes), at: hub.now() });
        continue;
      }
      hub.setStatus(slot, 'idle');
      return { kind: 'done', text: streamed.text };
    }

    const ended = await afterBatch(await executeBatch(hub, slot, turn, streamed.toolUses, streamed.inputErrors));
    if (ended) return ended;
  }
}
