import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for Telegram's Bot API (`<apiRoot>/bot<token>/<method>`), enough for the
 * Telegram approvals (docs/remote.md#telegram): getMe, deleteWebhook, getUpdates (long poll:
 * answers at once when updates wait, else when one is pushed or the poll's timeout passes),
 * sendMessage, editMessageText, answerCallbackQuery. `down` makes every call a 502 (the API
 * unreachable); `refuseSends` makes sendMessage Telegram's 403 for a bot the user blocked
 * (recorded, then refused) while everything else works; a wrong token gets Telegram's 401.
 * Everything received is recorded.
 */
export interface BotCall {
  readonly method: string;
  readonly params: Record<string, unknown>;
  /** sendMessage: the id the fake gave the message. */
  messageId?: number;
}

export interface FakeBotApi {
  readonly apiRoot: string;
  readonly token: string;
  readonly calls: BotCall[];
  down: boolean;
  refuseSends: boolean;
  /** Queue an update (update_id is filled in). */
  push(update: Record<string, unknown>): void;
  /** Queue an update as given, update_id and all (a broken or hostile API server's). */
  pushRaw(update: Record<string, unknown>): void;
  /** The first call (already made or coming) that matches. */
  waitFor(match: (call: BotCall) => boolean, timeoutMs?: number): Promise<BotCall>;
  sent(): BotCall[];
  close(): Promise<void>;
}

export const BOT_TOKEN = '123456:TEST-token_for-the-fake';

export async function startFakeBotApi(): Promise<FakeBotApi> {
  const calls: BotCall[] = [];
  const updates: Record<string, unknown>[] = [];
  let updateId = 100;
  let messageId = 1;
  let pollers: (() => void)[] = [];
  let watchers: ((call: BotCall) => void)[] = [];
  const open = new Set<ServerResponse>();

  const reply = (res: ServerResponse, status: number, body: unknown): void => {
    open.delete(res);
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const ok = (res: ServerResponse, result: unknown): void => reply(res, 200, { ok: true, result });

  const readBody = (req: IncomingMessage): Promise<Record<string, unknown>> =>
    new Promise((resolve) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          resolve(text ? (JSON.parse(text) as Record<string, unknown>) : {});
        } catch {
          resolve({ raw: text });
        }
      });
    });

  const server = createServer(async (req, res) => {
    open.add(res);
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(req.url ?? '');
    const params = await readBody(req);
    if (!match) return reply(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    const [, token, method] = match as unknown as [string, string, string];
    if (self.down) return reply(res, 502, { ok: false, error_code: 502, description: 'Bad Gateway' });
    if (token !== BOT_TOKEN) return reply(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
    const call: BotCall = { method, params };
    if (method === 'sendMessage') call.messageId = messageId++;
    calls.push(call);
    const wake = watchers;
    watchers = [];
    for (const w of wake) w(call);
    switch (method) {
      case 'getMe':
        return ok(res, { id: 123456, is_bot: true, first_name: 'Legion', username: 'legion_test_bot' });
      case 'deleteWebhook':
        return ok(res, true);
      case 'getUpdates': {
        const offset = Number(params.offset ?? 0);
        const take = (): Record<string, unknown>[] => updates.filter((u) => Number(u.update_id) >= offset);
        if (take().length > 0) return ok(res, take());
        const timeoutMs = Math.min(Number(params.timeout ?? 0), 30) * 1000;
        const timer = setTimeout(() => finish(), timeoutMs);
        const finish = (): void => {
          clearTimeout(timer);
          pollers = pollers.filter((p) => p !== finish);
          ok(res, take());
        };
        pollers.push(finish);
        res.on('close', () => {
          clearTimeout(timer);
          pollers = pollers.filter((p) => p !== finish);
        });
        return;
      }
      case 'sendMessage': {
        if (self.refuseSends) return reply(res, 403, { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' });
        const id = call.messageId;
        return ok(res, { message_id: id, date: 0, chat: { id: Number(params.chat_id), type: 'private' }, text: params.text });
      }
      case 'editMessageText':
        return ok(res, { message_id: Number(params.message_id), date: 0, chat: { id: Number(params.chat_id), type: 'private' }, text: params.text });
      case 'answerCallbackQuery':
        return ok(res, true);
      default:
        return reply(res, 404, { ok: false, error_code: 404, description: `Not Found: method ${method}` });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const self: FakeBotApi = {
    apiRoot: `http://127.0.0.1:${port}`,
    token: BOT_TOKEN,
    calls,
    down: false,
    refuseSends: false,
    push(update) {
      self.pushRaw({ ...update, update_id: updateId++ });
    },
    pushRaw(update) {
      updates.push(update);
      const wake = pollers;
      pollers = [];
      for (const p of wake) p();
    },
    waitFor(match, timeoutMs = 8000) {
      const seen = calls.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('fake bot API: no matching call in time')), timeoutMs);
        const watch = (call: BotCall): void => {
          if (!match(call)) return void watchers.push(watch);
          clearTimeout(timer);
          resolve(call);
        };
        watchers.push(watch);
      });
    },
    sent: () => calls.filter((c) => c.method === 'sendMessage'),
    close: () =>
      new Promise((resolve) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return self;
}

/** The `callback_data` of a sent message's Approve or Reject button (what a press sends back). */
export function buttonDataOf(call: BotCall, label: 'Approve' | 'Reject'): string {
  const rows = (call.params.reply_markup as { inline_keyboard?: { text: string; callback_data: string }[][] } | undefined)?.inline_keyboard ?? [];
  const found = rows.flat().find((b) => b.text === label);
  if (!found) throw new Error(`no ${label} button in ${JSON.stringify(call.params)}`);
  return found.callback_data;
}
