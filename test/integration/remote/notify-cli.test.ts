import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import { APP_DIR } from '../../helpers/app-harness';
import { startWebhookServer } from '../../helpers/webhook-server';
import { trustWorkspace } from '../../helpers/trust';

/** `notify` in .legion/config.yaml is started by the composition root: `legion run` posts its run-end. */
test('legion run with notify config: the run-end event reaches the webhook before the process ends', async () => {
  const server = await startWebhookServer();
  try {
    await withTempDir(async (dir) => {
      await writeFile(join(dir, 'script.yaml'), 'version: 1\nreplies:\n  - { agent: ur-agent, on: message, text: "hi there" }\n');
      await mkdir(join(dir, '.legion'), { recursive: true, mode: 0o700 });
      await writeFile(join(dir, '.legion', 'config.yaml'), `notify:\n  - url: ${server.url}\n    events: [run-end, message-add]\n`, { mode: 0o600 });
      const env = { HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') };
      await trustWorkspace(dir, env);
      const result = await runCli(['run', 'hello'], { cwd: dir, env, appDir: APP_DIR });
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, 'hi there\n');
      const kinds = server.received.map((h) => (JSON.parse(h.body) as { event: { type: string } }).event.type);
      assert.deepEqual(kinds, ['message-add', 'message-add', 'run-end']);
      assert.match((JSON.parse(server.received[1]!.body) as { text: string }).text, /^legion: session-user__ur-agent__default assistant: hi there$/);
    });
  } finally {
    await server.close();
  }
});
