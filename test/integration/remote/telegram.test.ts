import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { IGNORED_CHATS_NOTICED, STRANGER_LINES_PER_CHAT, startTelegram } from '../../../src/remote/telegram';
import { buttonDataOf, startFakeBotApi, type BotCall, type FakeBotApi } from '../../helpers/fake-bot-api';
import { startAppHarness, type AppHarness } from '../../helpers/app-harness';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';
import { createFakeCore } from '../../helpers/fake-core';

/**
 * Telegram approvals (docs/remote.md#telegram) against a local fake Bot API. The composition
 * root starts the channel itself, as for a user: `remote.telegram` in `.legion/config.yaml`
 * (chat id, the fake's API root), the token in `$LEGION_TELEGRAM_TOKEN`, the operator's log
 * through ComposeOptions.log (startAppHarness); so a wiring bug fails these tests too.
 */

const CHAT = 4242;
const ANN = { id: 7, is_bot: false, first_name: 'Ann', username: 'ann' };
const SCRIPT = `
replies:
${['a', 'b', 'c'].map((f) => `  - { agent: worker, on: message, when: "^write ${f}", toolCalls: [{ name: file_write, input: { path: ${f}.txt, content: "x" } }] }`).join('\n')}
  - { agent: worker, on: message, when: "^ask", toolCalls: [{ name: communicator, input: { targetId: user, message: "Which color?" } }] }
  - { agent: worker, on: tool-result, text: "worker: {{lastText}}" }
  - { agent: worker, on: tool-result, text: "worker: {{lastText}}" }
  - { agent: worker, on: tool-result, text: "worker: {{lastText}}" }
  - { agent: worker, on: tool-error, text: "failed: {{lastText}}" }
  - { agent: worker, on: tool-error, text: "failed: {{lastText}}" }
`;

interface Rig {
  readonly h: AppHarness;
  readonly bot: FakeBotApi;
  readonly logged: string[];
  readonly dir: string;
}

async function withRig(fn: (rig: Rig) => Promise<void>, options: { down?: boolean; token?: string } = {}): Promise<void> {
  await withTempDir(async (dir) => {
    const bot = await startFakeBotApi();
    bot.down = options.down ?? false;
    const logged: string[] = [];
    const h = await startAppHarness({
      dir, agents: [{ id: 'worker', tools: ['file_write', 'communicator'] }], script: SCRIPT, rules: { file_write: 'ask' },
      config: { remote: { telegram: { chatId: CHAT, apiRoot: bot.apiRoot } } }, env: { LEGION_TELEGRAM_TOKEN: options.token ?? bot.token }, log: (l) => void logged.push(l),
    });
    try {
      await fn({ h, bot, logged, dir });
    } finally {
      await h.close();
      await bot.close();
    }
  });
}

const button = (messageId: number, data: string, chatId = CHAT, from = ANN) => ({
  callback_query: { id: `cb-${data}-${chatId}`, from, chat_instance: 'x', data, message: { message_id: messageId, date: 0, chat: { id: chatId, type: 'private' } } },
});
const isSend = (text: RegExp) => (c: BotCall) => c.method === 'sendMessage' && text.test(String(c.params.text));
const isEdit = (text: RegExp) => (c: BotCall) => c.method === 'editMessageText' && text.test(String(c.params.text));

test('telegram: a request reaches the chat with agent, chain, tool, key argument and two buttons; a button press approves it as remote:telegram:@ann', async () => {
  await withRig(async ({ h, bot, dir }) => {
    const sent = h.core.send('worker', 'write a');
    assert.ok(sent.ok);
    const message = await bot.waitFor(isSend(/^Approval apr-1/));
    assert.equal(message.params.chat_id, CHAT);
    assert.equal(message.params.text, 'Approval apr-1: worker wants file_write a.txt (user → worker)\nwhy asked: test rule: file_write → ask');
    assert.equal(message.params.parse_mode, undefined, 'plain text: nothing from an agent can format');
    const approve = buttonDataOf(message, 'Approve');
    assert.match(approve, /^a:[A-Za-z0-9_-]{22}$/, 'a random button id, not the request id');
    assert.equal(buttonDataOf(message, 'Reject'), `r:${approve.slice(2)}`);
    assert.ok(Buffer.byteLength(approve) <= 64, "Telegram's callback_data limit");
    assert.deepEqual(message.params.reply_markup, { inline_keyboard: [[{ text: 'Approve', callback_data: approve }, { text: 'Reject', callback_data: `r:${approve.slice(2)}` }]] });
    bot.push(button(message.messageId!, approve));
    assert.equal(await h.core.idle(sent.sessionId), 'worker: Created a.txt (1 byte, 1 line)');
    assert.ok(existsSync(join(dir, 'a.txt')));
    assert.deepEqual(h.audit().filter((a) => a.requestId).map((a) => [a.requestId, a.decision, a.decidedBy]), [['apr-1', 'approved', 'remote:telegram:@ann']]);
    const answer = await bot.waitFor((c) => c.method === 'answerCallbackQuery');
    assert.equal(answer.params.text, 'apr-1 approved');
    const edit = await bot.waitFor(isEdit(/approved/));
    assert.equal(edit.params.message_id, message.messageId);
    assert.equal(edit.params.text, `${String(message.params.text)}\n\n✅ approved in Telegram by @ann`);
    assert.equal(edit.params.reply_markup, undefined, 'the buttons are gone');
  });
});

test('telegram: a button left by a stopped run decides nothing in the next run, whose request ids start again; the stopped run took the buttons away', async () => {
  await withTempDir(async (dir) => {
    const bot = await startFakeBotApi();
    const start = (newRun: boolean): Promise<AppHarness> => startAppHarness({
      dir, agents: [{ id: 'worker', tools: ['file_write', 'communicator'] }], script: SCRIPT, rules: { file_write: 'ask' }, ...(newRun ? { newRun } : {}),
      config: { remote: { telegram: { chatId: CHAT, apiRoot: bot.apiRoot } } }, env: { LEGION_TELEGRAM_TOKEN: bot.token },
    });
    try {
      const first = await start(false);
      let old: BotCall;
      try {
        assert.ok(first.core.send('worker', 'write a').ok);
        old = await bot.waitFor(isSend(/^Approval apr-1:.*a\.txt/));
      } finally {
        await first.close();
      }
      const stopped = await bot.waitFor((c) => isEdit(/this Legion run stopped/)(c) && c.params.message_id === old.messageId);
      assert.equal(stopped.params.reply_markup, undefined, 'the stopped run took its buttons away');

      const second = await start(true);
      try {
        const sent = second.core.send('worker', 'write b', 'b');
        assert.ok(sent.ok);
        const fresh = await bot.waitFor(isSend(/^Approval apr-1:.*b\.txt/));
        assert.notEqual(buttonDataOf(fresh, 'Approve'), buttonDataOf(old, 'Approve'), 'per request and per run');
        // The old message's button (still on the phone if the edit never arrived), and the old data format.
        bot.push(button(old.messageId!, buttonDataOf(old, 'Approve')));
        bot.push({ callback_query: { ...button(old.messageId!, 'a:apr-1').callback_query, id: 'legacy' } });
        await until(() => bot.calls.filter((c) => c.method === 'answerCallbackQuery').length === 2, 'both presses answered');
        assert.deepEqual(bot.calls.filter((c) => c.method === 'answerCallbackQuery').map((c) => c.params.text), ['this request is no longer pending', 'this request is no longer pending']);
        assert.deepEqual(second.core.pendingApprovals().map((p) => p.requestId), ['apr-1'], 'nothing decided');
        assert.equal(second.events.filter((e) => e.type === 'approval-resolve').length, 0);
        assert.ok(!existsSync(join(dir, 'b.txt')));
        // This run's own button still works.
        bot.push(button(fresh.messageId!, buttonDataOf(fresh, 'Approve')));
        assert.equal(await second.core.idle(sent.sessionId), 'worker: Created b.txt (1 byte, 1 line)');
        assert.deepEqual(second.audit().filter((a) => a.requestId).map((a) => [a.requestId, a.decidedBy]), [['apr-1', 'remote:telegram:@ann']]);
      } finally {
        await second.close();
      }
    } finally {
      await bot.close();
    }
  });
});

test('telegram: two workspaces on one bot: a press decides only the request of the workspace that sent the button, though both hold an apr-1', async () => {
  await withTempDir(async (root) => {
    const bot = await startFakeBotApi();
    const start = async (name: string): Promise<AppHarness> => {
      const dir = join(root, name);
      mkdirSync(dir);
      return startAppHarness({
        dir, agents: [{ id: 'worker', tools: ['file_write', 'communicator'] }], script: SCRIPT, rules: { file_write: 'ask' },
        config: { remote: { telegram: { chatId: CHAT, apiRoot: bot.apiRoot } } }, env: { LEGION_TELEGRAM_TOKEN: bot.token },
      });
    };
    const one = await start('one');
    const two = await start('two');
    try {
      const sentOne = one.core.send('worker', 'write a');
      assert.ok(sentOne.ok && two.core.send('worker', 'write b', 'b').ok);
      const fromOne = await bot.waitFor(isSend(/^Approval apr-1:.*a\.txt/));
      await bot.waitFor(isSend(/^Approval apr-1:.*b\.txt/));
      // The fake hands every update to both pollers (as a bot shared by two workspaces may).
      bot.push(button(fromOne.messageId!, buttonDataOf(fromOne, 'Approve')));
      assert.equal(await one.core.idle(sentOne.sessionId), 'worker: Created a.txt (1 byte, 1 line)');
      await until(() => bot.calls.filter((c) => c.method === 'answerCallbackQuery').length === 2, 'both workspaces answered the press');
      assert.deepEqual(bot.calls.filter((c) => c.method === 'answerCallbackQuery').map((c) => c.params.text).sort(), ['apr-1 approved', 'this request is no longer pending']);
      assert.deepEqual(two.core.pendingApprovals().map((p) => p.requestId), ['apr-1'], 'the other workspace decided nothing');
      assert.ok(!existsSync(join(root, 'two', 'b.txt')));
    } finally {
      await one.close();
      await two.close();
      await bot.close();
    }
  });
});

test('telegram: a button press or a message from another chat is ignored and logged; the request stays pending; the terminal decides and the message says so', async () => {
  await withRig(async ({ h, bot, logged }) => {
    const sent = h.core.send('worker', 'write a');
    assert.ok(sent.ok);
    const message = await bot.waitFor(isSend(/^Approval apr-1/));
    bot.push(button(message.messageId!, buttonDataOf(message, 'Approve'), 999, { id: 66, is_bot: false, first_name: 'Mallory', username: 'mallory' }));
    bot.push({ message: { message_id: 77, date: 0, chat: { id: 999, type: 'private' }, from: { id: 66, is_bot: false, first_name: 'M' }, text: 'approve everything' } });
    await h.waitFor((e) => e.type === 'notice' && /^telegram: ignored a button press from chat 999 \(only chat 4242 is obeyed\)/.test(e.message));
    // The next poll shows both updates were consumed.
    await bot.waitFor((c) => c.method === 'getUpdates' && Number(c.params.offset) >= 102);
    assert.deepEqual(logged, ['telegram: ignored a button press from chat 999 (only chat 4242 is obeyed)', 'telegram: ignored a message from chat 999 (only chat 4242 is obeyed)']);
    assert.deepEqual(h.core.pendingApprovals().map((p) => p.requestId), ['apr-1']);
    assert.equal(bot.calls.filter((c) => c.method === 'answerCallbackQuery').length, 0);
    assert.deepEqual(h.core.resolveApprovals(['apr-1'], 'rejected', { reason: 'not today' }), { ok: true });
    const edit = await bot.waitFor(isEdit(/rejected/));
    assert.match(String(edit.params.text), /\n\n❌ rejected in the terminal: not today$/);
    assert.equal(await h.core.idle(sent.sessionId), 'worker: rejected by user: not today');
  });
});

test('telegram: messages from many other chats: each logged, at most 20 notices and one "more chats" notice, nothing more kept', async () => {
  await withRig(async ({ h, bot, logged }) => {
    for (let i = 0; i < 30; i++) bot.push({ message: { message_id: 50 + i, date: 0, chat: { id: 1000 + i, type: 'private' }, from: { id: 1000 + i, is_bot: false, first_name: 'X' }, text: 'hi' } });
    bot.push({ message: { message_id: 90, date: 0, chat: { id: CHAT, type: 'private' }, from: ANN, text: '/status' } });
    await bot.waitFor(isSend(/^Legion: 0 requests wait for you/));
    assert.equal(logged.length, 30);
    const notices = h.events.filter((e) => e.type === 'notice' && e.message.startsWith('telegram: ignored')).map((e) => (e.type === 'notice' ? e.message : ''));
    assert.equal(notices.length, IGNORED_CHATS_NOTICED + 1);
    assert.match(notices[IGNORED_CHATS_NOTICED - 1]!, /from chat 1019 /);
    assert.equal(notices[IGNORED_CHATS_NOTICED], `telegram: ignored messages from more than ${IGNORED_CHATS_NOTICED} other chats; further ones are only logged`);
  });
});

test('telegram: terminal and Telegram decide at once: one decision wins, the other is told', async () => {
  await withRig(async ({ h, bot }) => {
    const sent = h.core.send('worker', 'write a');
    assert.ok(sent.ok);
    const message = await bot.waitFor(isSend(/^Approval apr-1/));
    // Both in the same tick: the terminal first, then the button press arrives.
    bot.push(button(message.messageId!, buttonDataOf(message, 'Reject')));
    assert.deepEqual(h.core.resolveApprovals(['apr-1'], 'approved'), { ok: true });
    const answer = await bot.waitFor((c) => c.method === 'answerCallbackQuery');
    assert.match(String(answer.params.text), /^approval request apr-1 was already approved \(by user\)/);
    await h.core.idle(sent.sessionId);
    assert.equal(h.events.filter((e) => e.type === 'approval-resolve').length, 1);
    assert.deepEqual(h.audit().filter((a) => a.requestId).map((a) => [a.decision, a.decidedBy]), [['approved', 'user']]);
    assert.match(String((await bot.waitFor(isEdit(/approved/))).params.text), /✅ approved in the terminal$/);
  });
});

test('telegram: a reply to an agent\'s question is the user\'s answer; text while no question waits is told so', async () => {
  await withRig(async ({ h, bot }) => {
    bot.push({ message: { message_id: 10, date: 0, chat: { id: CHAT, type: 'private' }, from: ANN, text: 'hello?' } });
    const none = await bot.waitFor(isSend(/^No agent is waiting/));
    assert.deepEqual(none.params.reply_parameters, { message_id: 10 });
    const sent = h.core.send('worker', 'ask');
    assert.ok(sent.ok);
    const question = await bot.waitFor(isSend(/asks/));
    assert.equal(question.params.text, '❓ worker asks (session-worker__user__default):\nWhich color?\n\nReply to this message to answer.');
    bot.push({ message: { message_id: 11, date: 0, chat: { id: CHAT, type: 'private' }, from: ANN, text: 'blue', reply_to_message: { message_id: question.messageId, date: 0, chat: { id: CHAT, type: 'private' } } } });
    assert.equal(await h.core.idle(sent.sessionId), 'worker: blue');
  });
});

test('telegram: the Bot API down is a notice, never a crash; the terminal keeps deciding; what still waits is sent once it is back', async () => {
  await withRig(async ({ h, bot, dir }) => {
    const first = h.core.send('worker', 'write a');
    assert.ok(first.ok);
    await h.waitFor((e) => e.type === 'approval-request' && e.requestId === 'apr-1');
    const down = await h.waitFor((e) => e.type === 'notice' && /^telegram: .* failed \(.*502.*\); approvals still work in the terminal, retrying$/.test(e.message));
    assert.equal(down.type === 'notice' && down.level, 'warn');
    assert.deepEqual(h.core.resolveApprovals(['apr-1'], 'approved'), { ok: true });
    await h.core.idle(first.sessionId);
    assert.ok(existsSync(join(dir, 'a.txt')), 'the terminal works while Telegram is down');
    const second = h.core.send('worker', 'write b', 'b');
    assert.ok(second.ok);
    await h.waitFor((e) => e.type === 'approval-request' && e.requestId === 'apr-2');
    assert.equal(h.events.filter((e) => e.type === 'notice' && e.message.startsWith('telegram:')).length, 1, 'one notice per outage');
    bot.down = false;
    // The channel's own backoff (1 s, then doubling) decides when it looks again: wait for the event, generously.
    await h.waitFor((e) => e.type === 'notice' && e.message === 'telegram: the Bot API answers again', 30_000);
    const late = await bot.waitFor(isSend(/^Approval apr-2/));
    assert.ok(late);
    assert.equal(bot.sent().filter((c) => /apr-1/.test(String(c.params.text))).length, 0, 'a request decided meanwhile is not sent');
    bot.push(button(late.messageId!, buttonDataOf(late, 'Approve')));
    await h.core.idle(second.sessionId);
    assert.ok(existsSync(join(dir, 'b.txt')));
  }, { down: true });
});

test('telegram: malformed updates (zod-checked: a press naming no user, an oversized text, a mistyped chat) decide and answer nothing; logged, one notice', async () => {
  await withRig(async ({ h, bot, logged }) => {
    const sent = h.core.send('worker', 'write a');
    assert.ok(sent.ok);
    const message = await bot.waitFor(isSend(/^Approval apr-1/));
    const press = button(message.messageId!, buttonDataOf(message, 'Approve')).callback_query;
    const { from: _from, ...anonymous } = press;
    bot.push({ callback_query: anonymous });
    bot.push({ callback_query: { ...press, message: { ...press.message, chat: { id: String(CHAT), type: 'private' } } } });
    const ask = h.core.send('worker', 'ask', 'q');
    assert.ok(ask.ok);
    await bot.waitFor(isSend(/asks/));
    bot.push({ message: { message_id: 12, date: 0, chat: { id: CHAT, type: 'private' }, from: ANN, text: 'x'.repeat(5000) } });
    // A well-formed message after them shows all three were taken and passed over.
    bot.push({ message: { message_id: 13, date: 0, chat: { id: CHAT, type: 'private' }, from: ANN, text: '/status' } });
    await bot.waitFor(isSend(/^Legion: 1 request waits for you/));
    assert.deepEqual(logged.map((l) => l.replace(/update \d+/, 'update N')), [
      'telegram: ignored a malformed update N (callback_query.from: Invalid input: expected object, received undefined)',
      'telegram: ignored a malformed update N (callback_query.message.chat.id: Invalid input: expected number, received string)',
      'telegram: ignored a malformed update N (message.text: Too big: expected string to have <=4096 characters)',
    ]);
    assert.equal(h.events.filter((e) => e.type === 'notice' && /malformed/.test(e.message)).length, 1, 'one notice, then silence');
    assert.deepEqual(h.core.pendingApprovals().map((p) => p.requestId), ['apr-1'], 'no decision');
    assert.equal(bot.calls.filter((c) => c.method === 'answerCallbackQuery').length, 0);
    assert.deepEqual(h.core.sessions().filter((s) => s.awaitingUser).map((s) => s.id), ['session-worker__user__default'], 'the oversized text was not forwarded as the answer');
  });
});

test('telegram: a refused bot token is one error notice and the channel stops; the core is unaffected', async () => {
  await withRig(async ({ h }) => {
    const notice = await h.waitFor((e) => e.type === 'notice' && /bot token was refused/.test(e.message));
    assert.equal(notice.type === 'notice' && notice.level, 'error');
    const sent = h.core.send('worker', 'write a');
    assert.ok(sent.ok);
    await h.waitFor((e) => e.type === 'approval-request');
    assert.deepEqual(h.core.resolveApprovals(['apr-1'], 'approved'), { ok: true });
    await h.core.idle(sent.sessionId);
  }, { token: '999:wrong' });
});

/** A wall-clock window in which a busy loop would make hundreds of calls; only upper bounds are asserted over it (a slow machine makes fewer, never more). */
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const chatText = (messageId: number, text: string, chatId = CHAT) => ({ message: { message_id: messageId, date: 0, chat: { id: chatId, type: 'private' }, from: ANN, text } });
const telegramNotices = (h: AppHarness): string[] => h.events.flatMap((e) => (e.type === 'notice' && e.message.startsWith('telegram:') ? [e.message] : []));

test('telegram: sending refused for good (403, the user blocked the bot) while polling works: one notice, resent with backoff, no busy loop; sent once sending works again', async () => {
  await withRig(async ({ h, bot }) => {
    bot.refuseSends = true;
    const sent = h.core.send('worker', 'write a');
    assert.ok(sent.ok);
    await bot.waitFor(isSend(/^Approval apr-1/));
    await h.waitFor((e) => e.type === 'notice' && /^telegram: sending approval request failed \(.*403.*blocked by the user.*\); approvals still work in the terminal, retrying$/.test(e.message));
    // Three messages from the chat: three poll passes, each answer refused too.
    for (let i = 0; i < 3; i++) {
      const before = bot.sent().length;
      bot.push(chatText(20 + i, 'hello'));
      await until(() => bot.sent().slice(before).some((c) => /^No agent is waiting/.test(String(c.params.text))), 'the (refused) answer');
    }
    await pause(1500);
    // 1 request + 3 answers + at most one resend per poll pass (1 s, 2 s, … apart); a busy loop made hundreds.
    assert.ok(bot.sent().length <= 7, `${bot.sent().length} sendMessage calls`);
    assert.ok(bot.calls.filter((c) => c.method === 'getUpdates').length <= 8, `${bot.calls.filter((c) => c.method === 'getUpdates').length} getUpdates calls`);
    assert.equal(telegramNotices(h).length, 1, telegramNotices(h).join('\n'));
    // The user unblocks the bot: the next answer goes through (one notice), the next poll pass sends what waits.
    bot.refuseSends = false;
    const from = bot.calls.length;
    bot.push(chatText(30, 'hello'));
    await h.waitFor((e) => e.type === 'notice' && e.message === 'telegram: sending to the chat works again');
    bot.push(chatText(31, 'hello'));
    await until(() => bot.calls.slice(from).some(isSend(/^Approval apr-1/)), 'the request sent again');
    const late = bot.calls.slice(from).find(isSend(/^Approval apr-1/))!;
    bot.push(button(late.messageId!, buttonDataOf(late, 'Approve')));
    assert.equal(await h.core.idle(sent.sessionId), 'worker: Created a.txt (1 byte, 1 line)');
    assert.equal(telegramNotices(h).length, 2, telegramNotices(h).join('\n'));
  });
});

test('telegram: an update_id that is not a safe integer (a broken API server) is never acted on and does not spin the poll; the log never carries the raw value', async () => {
  await withRig(async ({ h, bot, logged }) => {
    const bad = 2 ** 60;
    bot.pushRaw({ update_id: bad, ...chatText(40, 'hello') });
    // A valid update behind it is handled once; the bad one (which the fake keeps returning: nothing can move the offset past it) never.
    bot.push(chatText(41, 'hello'));
    await bot.waitFor((c) => isSend(/^No agent is waiting/)(c) && (c.params.reply_parameters as { message_id: number }).message_id === 41, 15_000);
    await pause(1500);
    const answers = bot.sent().filter((c) => /^No agent is waiting/.test(String(c.params.text)));
    assert.deepEqual(answers.map((c) => (c.params.reply_parameters as { message_id: number }).message_id), [41]);
    assert.ok(bot.calls.filter((c) => c.method === 'getUpdates').length <= 8, `${bot.calls.filter((c) => c.method === 'getUpdates').length} getUpdates calls`);
    assert.ok(logged.length >= 1 && logged.length <= 6, logged.join('\n'));
    assert.ok(logged.every((l) => !l.includes(String(bad)) && !l.includes('1152921504606847000')), logged.join('\n'));
    assert.ok(bot.calls.filter((c) => c.method === 'getUpdates').every((c) => Number(c.params.offset) <= 101), 'the offset moved past the valid update only');
    assert.ok(bot.calls.some((c) => c.method === 'getUpdates' && Number(c.params.offset) === 101), 'the offset moved past the valid update');
    assert.ok(telegramNotices(h).some((n) => /1 update without a valid update_id/.test(n)), telegramNotices(h).join('\n'));
  });
});

test('telegram: a stranger chat spamming the bot: its first lines logged, the rest only counted (one summary line at close)', async () => {
  let log: string[] = [];
  const lineFrom999 = 'telegram: ignored a message from chat 999 (only chat 4242 is obeyed)';
  await withRig(async ({ bot, logged }) => {
    log = logged;
    for (let i = 0; i < 10; i++) bot.push(chatText(60 + i, 'spam', 999));
    bot.push(chatText(90, '/status'));
    await bot.waitFor(isSend(/^Legion: 0 requests wait for you/));
    assert.deepEqual(logged, Array.from({ length: STRANGER_LINES_PER_CHAT }, () => lineFrom999));
  });
  // The count not yet logged is not lost when the channel stops.
  assert.deepEqual(log.slice(STRANGER_LINES_PER_CHAT), [`telegram: ignored 7 more updates from other chats (each chat's first ${STRANGER_LINES_PER_CHAT} are logged, then only counted)`]);
});

test('telegram: other chats\' updates past their first lines: one summary line per interval with the count, per chat its own first lines', async () => {
  const bot = await startFakeBotApi();
  const logged: string[] = [];
  // strangerSummaryMs 300 is safe under load: the checks count lines and wait for them, whatever the intervals' timing.
  const telegram = startTelegram({ core: createFakeCore(), token: bot.token, chatId: CHAT, apiRoot: bot.apiRoot, log: (l) => void logged.push(l), strangerSummaryMs: 300 });
  const counted = (): number => logged.reduce((n, l) => n + Number(/^telegram: ignored (\d+) more updates? from other chats/.exec(l)?.[1] ?? 0), 0);
  const summaries = (): number => logged.filter((l) => /more updates? from other chats/.test(l)).length;
  try {
    for (let i = 0; i < 10; i++) bot.push(chatText(60 + i, 'spam', 999));
    await until(() => counted() === 7, 'the summary of the 7 past the first 3');
    assert.equal(logged.filter((l) => /from chat 999 /.test(l)).length, STRANGER_LINES_PER_CHAT);
    const first = summaries();
    for (let i = 0; i < 5; i++) bot.push(chatText(70 + i, 'spam', 998));
    for (let i = 0; i < 4; i++) bot.push(chatText(80 + i, 'spam', 999));
    await until(() => counted() === 13, 'the next summary: 2 from the new chat, 4 more from the first');
    assert.equal(logged.filter((l) => /from chat 998 /.test(l)).length, STRANGER_LINES_PER_CHAT);
    assert.equal(logged.filter((l) => /from chat 999 /.test(l)).length, STRANGER_LINES_PER_CHAT);
    assert.ok(summaries() > first, 'a later interval has its own line');
    assert.equal(logged.length, 2 * STRANGER_LINES_PER_CHAT + summaries());
  } finally {
    await telegram.close();
    await bot.close();
  }
});
