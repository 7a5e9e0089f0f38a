import { USER_ID } from '../collective/participant';
import type { ToolContext, ToolResult } from '../tools/types';
import type { HeadlessMode } from './env';
import type { Journal } from './journal';
import type { Slots } from './run-state';
import type { Question, SessionSlot, Turn } from './turn';
import { firstLine } from './format';

export interface QuestionDeps {
  readonly headless?: HeadlessMode;
  readonly slots: Slots;
  readonly journal: Journal;
}

/**
 * An agent asks the user (communicator with targetId `user`). The question is appended to
 * the user's lane as the initiator's message, a notice tells the user, and the call waits
 * for the answer (`core.reply`, or `core.send` to the asking agent with the lane's name).
 * Questions to one lane are answered in order. Headless: an error result at once.
 */
export function askUser(deps: QuestionDeps, turn: Turn, context: ToolContext, name: string, text: string): Promise<ToolResult> {
  if (deps.headless) {
    return Promise.resolve({ content: 'no user available: this is a headless run (legion run); decide yourself, or report back to your caller', isError: true });
  }
  const { journal } = deps;
  const { slot } = deps.slots.open({ initiatorId: turn.agent.id, responderId: USER_ID, name });
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
        withdraw(journal, slot, question);
        resolve({ content: 'interrupted by the user: the question was not answered', isError: true, failure: 'interrupted' });
      },
    };
    const onAbort = (): void => question.cancel();
    if (context.signal.aborted) return question.cancel();
    context.signal.addEventListener('abort', onAbort, { once: true });
    slot.questions.push(question);
    if (slot.questions.length === 1) present(journal, slot, question);
  });
}

function present(journal: Journal, slot: SessionSlot, question: Question): void {
  question.presented = true;
  journal.append(slot.handle, { role: 'user', content: [{ type: 'text', text: question.text }], at: journal.now() });
  journal.setStatus(slot, 'thinking', 'waiting for your answer');
  journal.notice('info', `${question.askedBy} asks you: ${firstLine(question.text)}`, slot.handle.id);
}

function advance(journal: Journal, slot: SessionSlot): void {
  const next = slot.questions[0];
  if (next) present(journal, slot, next);
  else {
    journal.setStatus(slot, 'idle');
    slot.settleIdle();
  }
}

function withdraw(journal: Journal, slot: SessionSlot, question: Question): void {
  const at = slot.questions.indexOf(question);
  if (at === -1) return;
  slot.questions.splice(at, 1);
  if (at === 0) advance(journal, slot);
}

/** Answer the open question of a user lane. Returns an error text when none is waiting. */
export function answerQuestion(journal: Journal, slot: SessionSlot, text: string): string | null {
  const question = slot.questions[0];
  if (!question || slot.handle.key.responderId !== USER_ID) return `no question is waiting for your answer in ${slot.handle.id}`;
  slot.questions.shift();
  journal.append(slot.handle, { role: 'assistant', content: [{ type: 'text', text }], at: journal.now() });
  question.answer(text);
  advance(journal, slot);
  return null;
}
