import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { composeApp } from '../../../src/cli/compose';
import { appContext } from '../../helpers/crash-workspace';
import { buttonDataOf, startFakeBotApi } from '../../helpers/fake-bot-api';
import { withTempDir } from '../../helpers/tmp';
import { trustWorkspace } from '../../helpers/trust';

/** `remote.telegram` in .legion/config.yaml is started by the composition root (the TUI's in-process core, `legion serve`). */

async function workspace(dir: string, config: string): Promise<Record<string, string>> {
  await writeFile(join(dir, 'script.yaml'), 'version: 1\nreplies:\n  - { agent: writer, on: message, toolCalls: [{ name: file_write, input: { path: out.md, content: "# out" } }] }\n  - { agent: writer, on: tool-result, text: "written" }\n');
  await mkdir(join(dir, '.legion', 'collective', 'participants'), { recursive: true, mode: 0o700 });
  await writeFile(join(dir, '.legion', 'collective', 'participants', 'writer.json'), JSON.stringify({
    version: 1, id: 'writer', kind: 'agent', name: 'Writer', description: 'writes', systemPrompt: 'You write files.', tools: ['file_write'],
  }), { mode: 0o600 });
  await writeFile(join(dir, '.legion', 'config.yaml'), config, { mode: 0o600 });
  await trustWorkspace(dir, { HOME: dir }); // appContext's HOME
  return { LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') };
}

test('compose: remote.telegram sends the user\'s approvals to the chat and obeys its buttons', { timeout: 60_000 }, async () => {
  const bot = await startFakeBotApi();
  try {
    await withTempDir(async (dir) => {
      const env = await workspace(dir, `remote:\n  telegram:\n    tokenEnv: TG_TOKEN\n    chatId: 555\n    apiRoot: ${bot.apiRoot}\n`);
      const app = await composeApp(appContext(dir, { ...env, TG_TOKEN: bot.token }));
      try {
        const sent = app.core.send('writer', 'write it');
        assert.ok(sent.ok);
        const message = await bot.waitFor((c) => c.method === 'sendMessage' && /^Approval apr-1: writer wants file_write out\.md/.test(String(c.params.text)));
        assert.equal(message.params.chat_id, 555);
        bot.push({ callback_query: { id: 'q', from: { id: 1, is_bot: false, first_name: 'A', username: 'ann' }, chat_instance: 'x', data: buttonDataOf(message, 'Approve'), message: { message_id: message.messageId, date: 0, chat: { id: 555, type: 'private' } } } });
        assert.equal(await app.core.idle(sent.sessionId), 'written');
        assert.ok(existsSync(join(dir, 'out.md')));
      } finally {
        await app.close('test done');
      }
    });
  } finally {
    await bot.close();
  }
});

test('compose: remote.telegram without its token variable is one warning at start; headless runs never start it', async () => {
  await withTempDir(async (dir) => {
    const env = await workspace(dir, 'remote:\n  telegram:\n    chatId: 555\n    apiRoot: http://127.0.0.1:9\n');
    const app = await composeApp(appContext(dir, env));
    try {
      assert.ok(app.warnings.includes('telegram: $LEGION_TELEGRAM_TOKEN is not set; Telegram approvals are off (docs/remote.md)'), app.warnings.join('\n'));
    } finally {
      await app.close('test done');
    }
    const bot = await startFakeBotApi();
    try {
      await writeFile(join(dir, '.legion', 'config.yaml'), `remote:\n  telegram:\n    chatId: 555\n    apiRoot: ${bot.apiRoot}\n`);
      const headless = await composeApp(appContext(dir, { ...env, LEGION_TELEGRAM_TOKEN: bot.token }), { headless: { approve: 'deny' } });
      const sent = headless.core.send('writer', 'write it');
      assert.ok(sent.ok);
      await headless.core.idle(sent.sessionId);
      await headless.close('test done');
      assert.deepEqual(bot.calls, [], 'a headless run never talks to the bot');
    } finally {
      await bot.close();
    }
  });
});
