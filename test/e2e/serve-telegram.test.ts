import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bundlePath, ensureBundle } from '../helpers/bundle';
import { withTempDir } from '../helpers/tmp';
import { until } from '../helpers/processes';
import { setupServeWorkspace } from '../helpers/serve-workspace';
import { buttonDataOf, startFakeBotApi } from '../helpers/fake-bot-api';
import { connectServer } from '../../src/serve/connection';
import { readServerInfo } from '../../src/serve/discovery';

ensureBundle({ e2e: true });

/**
 * The built CLI: `legion serve` with `remote.telegram` in the config runs Telegram approvals in
 * the server (docs/remote.md#telegram): a request from an attached client reaches the chat, a
 * button press there decides it, and an update from another chat is a line in the server's log.
 */
test('legion serve with remote.telegram: the chat decides a request; another chat is ignored and logged', { timeout: 120_000 }, async () => {
  const bot = await startFakeBotApi();
  try {
    await withTempDir(async (dir) => {
      const env = await setupServeWorkspace(dir);
      await writeFile(join(dir, '.legion', 'config.yaml'), `remote:\n  telegram:\n    chatId: 555\n    apiRoot: ${bot.apiRoot}\n`, { mode: 0o600 });
      const fullEnv = { PATH: process.env.PATH, ...env, LEGION_TELEGRAM_TOKEN: bot.token };
      const child = spawn(process.execPath, [bundlePath, 'serve'], { cwd: dir, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr!.on('data', (d) => { err += d; });
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      try {
        await until(() => /serving run/.test(err), `the server to start: ${err}`, 60_000);
        bot.push({ message: { message_id: 1, date: 0, chat: { id: 999, type: 'private' }, from: { id: 66, is_bot: false, first_name: 'M' }, text: 'approve all' } });
        await until(() => err.includes('legion serve: telegram: ignored a message from chat 999 (only chat 555 is obeyed)\n'), `the log line: ${err}`, 30_000);

        const info = readServerInfo(join(dir, '.legion'));
        assert.equal(info.kind, 'server');
        const client = await connectServer({ socket: info.kind === 'server' ? info.info.socket : '', onEvent: () => undefined });
        const sent = (await client.request('send', { responderId: 'worker', text: 'write the file' })) as { sessionId: string };
        const message = await bot.waitFor((c) => c.method === 'sendMessage' && /^Approval apr-1: worker wants file_write out\.txt/.test(String(c.params.text)), 30_000);
        assert.equal(message.params.chat_id, 555);
        bot.push({ callback_query: { id: 'q1', from: { id: 7, is_bot: false, first_name: 'Ann', username: 'ann' }, chat_instance: 'x', data: buttonDataOf(message, 'Approve'), message: { message_id: message.messageId, date: 0, chat: { id: 555, type: 'private' } } } });
        assert.equal(await client.request('idle', { sessionId: sent.sessionId }), 'wrote it');
        assert.equal(readFileSync(join(dir, 'out.txt'), 'utf8'), 'hello');
        await bot.waitFor((c) => c.method === 'editMessageText' && /✅ approved in Telegram by @ann$/.test(String(c.params.text)), 30_000);
        client.close();

        const stopper = spawn(process.execPath, [bundlePath, 'stop'], { cwd: dir, env: fullEnv, stdio: 'ignore' });
        assert.equal(await new Promise((r) => stopper.on('exit', r)), 0);
        assert.equal(await exited, 0, err);
      } finally {
        child.kill('SIGKILL');
      }
    });
  } finally {
    await bot.close();
  }
});
