import { setTimeout as delay } from 'node:timers/promises';
// The web build of grammY uses Node's own fetch and AbortSignal (no node-fetch, whatwg-url, tr46 in the bundle).
import { Api, InlineKeyboard } from 'grammy/web';
import type { LegionEvent } from '../../events/types';
import { messageOf } from '../../errors';
import type { LegionCore } from '../../runtime/core-api';
import { actorOf, buttonData, decidedMessage, newButtonId, parseButton, questionMessage, requestMessage, STALE_BUTTON, stoppedMessage, type RequestShape } from './messages';
import { parseUpdate, parseUpdateBatch, type CallbackUpdate, type MessageUpdate } from './updates';

/**
 * Telegram approvals (docs/remote.md#telegram). Every request that waits on the user goes to
 * the configured chat with Approve/Reject buttons; a button press decides it through
 * `resolveApprovals` (audited as `remote:telegram:<user>`); the first decision from any front
 * end wins (the queue refuses the second) and the message is edited to say who decided where.
 * An agent's question to the user goes there too; a reply to it (or any text while exactly one
 * question waits) is the user's answer. Updates from any other chat are ignored, reported
 * once per chat and logged a few times per chat, then only counted. The Bot API being down (or
 * refusing to send: the user blocked the bot) is one notice and a retry with backoff, never a
 * throw or a busy loop: the terminal goes on as before, and requests that could not be sent
 * are sent once it answers again.
 */
export type TelegramCore = Pick<LegionCore, 'bus' | 'pendingApprovals' | 'resolveApprovals' | 'sessions'> & Partial<Pick<LegionCore, 'reply'>>;

export interface TelegramDeps {
  readonly core: TelegramCore;
  readonly token: string;
  readonly chatId: number;
  readonly apiRoot?: string;
  /** Long-poll wait in seconds (default 25). */
  readonly pollSeconds?: number;
  /** Delay before retry `attempt` (1-based) while the API fails; default 1 s doubling to 60 s. */
  readonly backoffMs?: (attempt: number) => number;
  /** Where ignored updates are logged besides the notice (`legion serve`'s log). */
  readonly log?: (line: string) => void;
  /** How often at most the count of other chats' updates past their first lines is logged (default 60 s). */
  readonly strangerSummaryMs?: number;
}

export interface TelegramHandle {
  close(): Promise<void>;
}

interface Tracked {
  readonly text: string;
  /** Random per request and run: what its buttons carry (docs/remote.md#telegram). */
  readonly buttonId: string;
  /** The chat messages showing it (a `/` command sends it again); edited when it is decided or the run stops. */
  messageIds: number[];
  decided?: { decision: string; decidedBy: string; reason: string };
}

/** Messages per request remembered for the final edit (a `/` command may send a request again). */
const MESSAGES_PER_REQUEST = 5;
/** Button ids remembered after their request was decided, so a late press says who decided (oldest forgotten first). */
const BUTTONS_KEPT = 1000;
/** How long closing waits for the edits that take the buttons of still pending requests away. */
const STOP_EDIT_MS = 3000;

const USER_ID = 'user';
/** Other chats named in a notice of their own; past this many, one last notice and the log only (a bot anyone can message must not flood the notices or grow memory). */
export const IGNORED_CHATS_NOTICED = 20;
/** Questions whose replies are still matched to their session (oldest forgotten first). */
export const QUESTIONS_KEPT = 200;
/** Log lines per other chat; past them (or past STRANGER_CHATS_COUNTED chats) its updates are only counted, one summary line a minute (a spammed bot must not grow the log without limit). */
export const STRANGER_LINES_PER_CHAT = 3;
const STRANGER_CHATS_COUNTED = 100;

export function startTelegram(deps: TelegramDeps): TelegramHandle {
  const api = new Api(deps.token, { ...(deps.apiRoot ? { apiRoot: deps.apiRoot } : {}), timeoutSeconds: (deps.pollSeconds ?? 25) + 15 });
  const stop = new AbortController();
  // grammY's type declarations name its Node shim's AbortSignal; its web build takes the standard one.
  const signal = stop.signal as unknown as Parameters<Api['getUpdates']>[1];
  const requests = new Map<string, Tracked>();
  /** Button id → request id, for the requests this run sent and that still wait. */
  const buttons = new Map<string, string>();
  const unsent = new Set<string>();
  const questions = new Map<number, string>();
  const ignoredChats = new Set<number>();
  const strangerLines = new Map<number, number>();
  let strangersUncounted = 0;
  let strangerTimer: ReturnType<typeof setTimeout> | undefined;
  // Two failures, kept apart: polling (the API unreachable: short polls until it answers) and
  // sending (e.g. 403, the user blocked the bot, while polling works: retried with backoff).
  // One notice for a failure that lasts, whichever came first; one when it is over.
  let pollFailing = false;
  let sendFailing = false;
  let resendAttempt = 0;
  let resendAt = 0;
  let malformedSaid = false;
  const backoff = deps.backoffMs ?? ((n: number) => Math.min(60_000, 1000 * 2 ** (n - 1)));

  const notice = (level: 'info' | 'warn' | 'error', message: string): void => void deps.core.bus.emit({ type: 'notice', level, message: `telegram: ${message}` });
  // The API's own words (whatever `apiRoot` answers): one line, printable, bounded.
  const problem = (error: unknown): string => messageOf(error).split('\n')[0]!.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '?').slice(0, 200);
  const reportFailure = (what: string, error: unknown, kind: 'poll' | 'send'): void => {
    if (!pollFailing && !sendFailing) notice('warn', `${what} failed (${problem(error)}); approvals still work in the terminal, retrying`);
    if (kind === 'poll') pollFailing = true;
    else sendFailing = true;
  };
  const sendWorked = (): void => {
    if (!sendFailing) return;
    sendFailing = false;
    resendAttempt = 0;
    resendAt = 0;
    if (!pollFailing) notice('info', 'sending to the chat works again');
  };

  const track = (request: RequestShape): Tracked => {
    const known = requests.get(request.requestId);
    if (known) return known;
    const tracked: Tracked = { text: requestMessage(request), buttonId: newButtonId(), messageIds: [] };
    requests.set(request.requestId, tracked);
    buttons.set(tracked.buttonId, request.requestId);
    // Decided requests keep their buttons known for a while (a late press is told who decided), not forever.
    if (buttons.size > BUTTONS_KEPT) {
      for (const [buttonId, requestId] of buttons) {
        if (buttons.size <= BUTTONS_KEPT) break;
        if (!requests.get(requestId) || requests.get(requestId)!.decided) buttons.delete(buttonId);
      }
    }
    return tracked;
  };

  /** Send a request to the chat (`again`: even if a message already shows it, for a `/` command). */
  const sendRequest = async (request: RequestShape, again = false): Promise<void> => {
    const tracked = track(request);
    if (tracked.messageIds.length > 0 && !again) return;
    const keyboard = new InlineKeyboard().text('Approve', buttonData('approved', tracked.buttonId)).text('Reject', buttonData('rejected', tracked.buttonId));
    try {
      const sent = await api.sendMessage(deps.chatId, tracked.text, { reply_markup: keyboard }, signal);
      tracked.messageIds = [...tracked.messageIds, sent.message_id].slice(-MESSAGES_PER_REQUEST);
      unsent.delete(request.requestId);
      sendWorked();
      if (tracked.decided) await editDecided(request.requestId);
    } catch (error) {
      if (stop.signal.aborted) return;
      unsent.add(request.requestId);
      reportFailure('sending approval request', error, 'send');
    }
  };

  const editDecided = async (requestId: string): Promise<void> => {
    const tracked = requests.get(requestId);
    if (!tracked?.decided || tracked.messageIds.length === 0) return;
    const { decision, decidedBy, reason } = tracked.decided;
    try {
      for (const messageId of tracked.messageIds) await api.editMessageText(deps.chatId, messageId, decidedMessage(tracked.text, decision, decidedBy, reason), {}, signal);
      requests.delete(requestId);
      sendWorked();
    } catch (error) {
      if (!stop.signal.aborted) reportFailure('updating a decided request', error, 'send');
    }
  };

  /** At stop: every message of a request still pending loses its buttons and says the run stopped. Bounded by STOP_EDIT_MS. */
  const editStopped = async (): Promise<void> => {
    const bounded = AbortSignal.timeout(STOP_EDIT_MS) as unknown as typeof signal;
    const edits = [...requests.values()].filter((t) => !t.decided).flatMap((t) => t.messageIds.map((id) => ({ id, text: stoppedMessage(t.text) })));
    await Promise.all(edits.map(({ id, text }) => api.editMessageText(deps.chatId, id, text, {}, bounded).catch(() => undefined)));
  };

  const sendQuestion = async (sessionId: string, askedBy: string, text: string): Promise<void> => {
    try {
      const sent = await api.sendMessage(deps.chatId, questionMessage(askedBy, sessionId, text), {}, signal);
      questions.set(sent.message_id, sessionId);
      if (questions.size > QUESTIONS_KEPT) questions.delete(questions.keys().next().value!);
      sendWorked();
    } catch (error) {
      if (!stop.signal.aborted) reportFailure('sending a question', error, 'send');
    }
  };

  const onEvent = (event: LegionEvent): void => {
    if (event.type === 'approval-request' && event.approverId === USER_ID) {
      void sendRequest(event);
    } else if (event.type === 'approval-resolve') {
      const tracked = requests.get(event.requestId);
      unsent.delete(event.requestId);
      if (!tracked) return;
      tracked.decided = { decision: event.decision, decidedBy: event.decidedBy, reason: event.reason };
      void editDecided(event.requestId);
    } else if (event.type === 'message-add' && event.message.role === 'user') {
      const session = deps.core.sessions().find((s) => s.id === event.sessionId);
      if (!session || session.responderId !== USER_ID) return;
      const text = event.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      if (text) void sendQuestion(event.sessionId, session.initiatorId, text);
    }
  };

  const flushStrangers = (): void => {
    if (strangerTimer) clearTimeout(strangerTimer);
    strangerTimer = undefined;
    if (strangersUncounted === 0) return;
    deps.log?.(`telegram: ignored ${strangersUncounted} more update${strangersUncounted === 1 ? '' : 's'} from other chats (each chat's first ${STRANGER_LINES_PER_CHAT} are logged, then only counted)`);
    strangersUncounted = 0;
  };

  const ignore = (chatId: number | undefined, what: string): void => {
    const line = `ignored ${what} from chat ${chatId ?? '?'} (only chat ${deps.chatId} is obeyed)`;
    const counted = chatId !== undefined && (strangerLines.has(chatId) || strangerLines.size < STRANGER_CHATS_COUNTED);
    const lines = counted ? (strangerLines.get(chatId) ?? 0) + 1 : Infinity;
    if (counted) strangerLines.set(chatId, lines);
    if (lines <= STRANGER_LINES_PER_CHAT) deps.log?.(`telegram: ${line}`);
    else {
      strangersUncounted += 1;
      if (!strangerTimer) {
        strangerTimer = setTimeout(flushStrangers, deps.strangerSummaryMs ?? 60_000);
        strangerTimer.unref();
      }
    }
    if (chatId === undefined || ignoredChats.has(chatId) || ignoredChats.size > IGNORED_CHATS_NOTICED) return;
    ignoredChats.add(chatId);
    if (ignoredChats.size <= IGNORED_CHATS_NOTICED) notice('warn', `${line}; further messages from it are ignored silently`);
    else notice('warn', `ignored messages from more than ${IGNORED_CHATS_NOTICED} other chats; further ones are only logged`);
  };

  const say = (text: string, replyTo?: number): Promise<unknown> =>
    api.sendMessage(deps.chatId, text, replyTo === undefined ? {} : { reply_parameters: { message_id: replyTo } }, signal).then(sendWorked).catch((error: unknown) => {
      if (!stop.signal.aborted) reportFailure('answering', error, 'send');
    });

  const onCallback = async (query: CallbackUpdate): Promise<void> => {
    const chatId = query.message?.chat.id;
    if (chatId !== deps.chatId) return ignore(chatId, 'a button press');
    const button = parseButton(query.data);
    // A button this run did not send (a stopped run's, another workspace's on the same bot, an
    // old `a:apr-1`) or one whose request was decided names nothing here: it decides nothing.
    const requestId = button ? buttons.get(button.buttonId) : undefined;
    let answer = STALE_BUTTON;
    if (button && requestId !== undefined) {
      const result = deps.core.resolveApprovals([requestId], button.decision, { by: actorOf(query.from) });
      answer = result.ok ? `${requestId} ${button.decision}` : result.error;
    }
    await api.answerCallbackQuery(query.id, { text: answer.slice(0, 190) }, signal).catch(() => undefined);
  };

  const onMessage = async (message: MessageUpdate): Promise<void> => {
    if (message.chat.id !== deps.chatId) return ignore(message.chat.id, 'a message');
    const text = message.text;
    if (!text) return;
    if (text.startsWith('/')) {
      const pending = deps.core.pendingApprovals().filter((p) => p.approverId === USER_ID);
      await say(`Legion: ${pending.length} request${pending.length === 1 ? '' : 's'} wait${pending.length === 1 ? 's' : ''} for you. Approve or reject with the buttons; reply to a question to answer it.`);
      for (const request of pending) await sendRequest(request, true);
      return;
    }
    const repliedTo = message.reply_to_message?.message_id;
    let sessionId = repliedTo === undefined ? undefined : questions.get(repliedTo);
    if (!sessionId) {
      const waiting = deps.core.sessions().filter((s) => s.awaitingUser);
      if (waiting.length === 1) sessionId = waiting[0]!.id;
      else return void (await say(waiting.length === 0 ? 'No agent is waiting for an answer.' : `${waiting.length} agents wait for an answer: reply to the question you are answering.`, message.message_id));
    }
    if (!deps.core.reply) return void (await say('This Legion cannot take answers here.', message.message_id));
    const result = deps.core.reply(sessionId, text);
    if (!result.ok) await say(result.error, message.message_id);
  };

  const malformed = (line: string): void => {
    deps.log?.(`telegram: ${line}`);
    if (!malformedSaid) notice('warn', `${line}; further malformed updates are ignored silently`);
    malformedSaid = true;
  };

  const handle = async (id: number, update: unknown): Promise<void> => {
    try {
      const parsed = parseUpdate(update);
      if (parsed.kind === 'callback') await onCallback(parsed.query);
      else if (parsed.kind === 'message') await onMessage(parsed.message);
      else if (parsed.kind === 'malformed') malformed(`ignored a malformed update ${id} (${parsed.problem})`);
    } catch (error) {
      if (!stop.signal.aborted) notice('warn', `an update could not be handled (${problem(error)})`);
    }
  };

  /** The backoff, cut short by stop. */
  const sleep = (ms: number): Promise<void> => delay(ms, undefined, { signal: stop.signal }).catch(() => undefined);

  const resendUnsent = async (): Promise<void> => {
    if (unsent.size === 0 || Date.now() < resendAt) return;
    const waiting = new Map(deps.core.pendingApprovals().map((p) => [p.requestId, p]));
    for (const id of [...unsent]) {
      const request = waiting.get(id);
      if (!request || request.approverId !== USER_ID) {
        unsent.delete(id);
        continue;
      }
      await sendRequest(request);
      // Still refused: the others wait for the next try too (one call per try, not one per request).
      if (unsent.has(id)) break;
    }
    if (unsent.size > 0 && !stop.signal.aborted) {
      resendAttempt += 1;
      resendAt = Date.now() + backoff(resendAttempt);
    }
  };

  const poll = async (): Promise<void> => {
    let offset = 0;
    let attempt = 0;
    while (!stop.signal.aborted) {
      let result: unknown;
      try {
        // While polling fails, a short poll: the recovery (and the requests that wait to be sent) is seen at once, not after a long poll.
        result = await api.getUpdates({ offset, timeout: pollFailing ? 0 : deps.pollSeconds ?? 25, allowed_updates: ['message', 'callback_query'] }, signal);
      } catch (error) {
        if (stop.signal.aborted) return;
        if ((error as { error_code?: number }).error_code === 401) {
          notice('error', 'the bot token was refused (401 Unauthorized); Telegram approvals are off until Legion restarts with a valid token');
          return;
        }
        reportFailure('reaching the Bot API', error, 'poll');
        attempt += 1;
        await sleep(backoff(attempt));
        continue;
      }
      const batch = parseUpdateBatch(result, offset);
      if (batch.kind === 'stuck') {
        // Nothing to move the offset past: polling again at once would return the same batch forever.
        if (!pollFailing) deps.log?.(`telegram: ignored an answer to getUpdates (${batch.problem})`);
        reportFailure('reading updates', new Error(batch.problem), 'poll');
        attempt += 1;
        await sleep(backoff(attempt));
        continue;
      }
      attempt = 0;
      if (pollFailing) {
        pollFailing = false;
        // The API answers: whatever failed meanwhile is tried again at once.
        sendFailing = false;
        resendAttempt = 0;
        resendAt = 0;
        notice('info', 'the Bot API answers again');
      }
      // Requests that could not be sent, if they still wait (with backoff while sending fails).
      await resendUnsent();
      offset = batch.next;
      if (batch.badIds > 0) malformed(`ignored ${batch.badIds} update${batch.badIds === 1 ? '' : 's'} without a valid update_id`);
      for (const { id, update } of batch.fresh) await handle(id, update);
    }
  };

  const unsubscribe = deps.core.bus.subscribeAll(onEvent);
  for (const request of deps.core.pendingApprovals()) if (request.approverId === USER_ID) void sendRequest(request);
  const polling = poll();

  return {
    async close() {
      unsubscribe();
      await editStopped();
      stop.abort();
      await polling;
      flushStrangers();
    },
  };
}
