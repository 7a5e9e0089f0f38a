import { USER_ID } from '../collective/participant';
import type { ToolContext, ToolResult } from '../tools/types';
import type { Hub, SessionSlot } from './hub';
import type { Turn } from './turn';
import { firstLine } from './format';

/** A question of an agent to the user, waiting in the user's lane `session-<agent>__user__<name>`. */
export interface Question {
  readonly text: string;
  readonly askedBy: string;
  /** True once the question is the lane's open one (its message appended). */
  presented: boolean;
  answer(text: string): void;
  cancel(): void;
}

/**
 * An agent asks the user (communicator with targetId `user`). The question is appended to
 * the user's lane as the initiator's message, a notice tells the user, and the call waits
 * for the answer (`core.reply`, or `core.send` to the asking agent with the lane's name).
 * Questions to one lane are answered in order. Headless: an error result at once.
 */
export function askUser(hub: Hub, turn: Turn, context: ToolContext, name: string, text: string): Promise<ToolResult> {
  if (hub.env.headless) {
    return Promise.resolve({ content: 'no user available: this is a headless run (legion run); decide yourself, or report back to your caller', isError: true });
  }
  const { slot } = hub.open({ initiatorId: turn.agent.id, responderId: USER_ID, name });
  return new Promise((resolve) => {
    const question: Question = {
      text,
      askedBy: turn.agent.id,
      presented: false,
      answer(answer) {
        context.signal.removeEventListener('abort', onAbort);
        resolve({ content: answer, summary: `user: ${firstLine(answer, 80)}` });
      },
      cancel() {
        context.signal.removeEventListener('abort', onAbort);
        withdraw(hub, slot, question);
        resolve({ content: 'interrupted by the user: the question was not answered', isError: true });
      },
    };
    const onAbort = (): void => question.cancel();
    if (context.signal.aborted) return question.cancel();
    context.signal.addEventListener('abort', onAbort, { once: true });
    slot.questions.push(question);
    if (slot.questions.length === 1) present(hub, slot, question);
  });
}

function present(hub: Hub, slot: SessionSlot, question: Question): void {
  question.presented = true;
  hub.append(slot.handle, { role: 'user', content: [{ type: 'text', text: question.text }], at: hub.now() });
  hub.setStatus(slot, 'thinking', 'waiting for your answer');
  hub.notice('info', `${question.askedBy} asks you: ${firstLine(question.text)}`, slot.handle.id);
}

function advance(hub: Hub, slot: SessionSlot): void {
  const next = slot.questions[0];
  if (next) present(hub, slot, next);
  else {
    hub.setStatus(slot, 'idle');
    hub.settleIdle(slot);
  }
}

function withdraw(hub: Hub, slot: SessionSlot, question: Question): void {
  const at = slot.questions.indexOf(question);
  if (at === -1) return;
  slot.questions.splice(at, 1);
  if (at === 0) advance(hub, slot);
}

/** Answer the open question of a user lane. Returns an error text when none is waiting. */
export function answerQuestion(hub: Hub, slot: SessionSlot, text: string): string | null {
  const question = slot.questions[0];
  if (!question || slot.handle.key.responderId !== USER_ID) return `no question is waiting for your answer in ${slot.handle.id}`;
  slot.questions.shift();
  hub.append(slot.handle, { role: 'assistant', content: [{ type: 'text', text }], at: hub.now() });
  question.answer(text);
  advance(hub, slot);
  return null;
}
