import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startAppHarness } from '../../helpers/app-harness';
import { withTempDir } from '../../helpers/tmp';

/**
 * A note from Legion (an undo's report, docs/undo.md) goes through the journal like every
 * message: scrubbed of secret values, persisted, then `message-add` (what the ledger and the
 * front ends see is what is on disk). Before, the undo service's delivery appended to the
 * session and emitted the event itself, unscrubbed.
 */
const SECRET = 'sk-ant-api03-notes-0123456789abcdefghijklmnopqrstuvwxyz';

test('appendNote goes through the journal: scrubbed, on disk, message-add; an unknown session is refused', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({ dir, script: 'replies:\n  - { agent: ur-agent, text: "hi" }\n', env: { ANTHROPIC_API_KEY: SECRET } });
    try {
      const sent = h.core.send('ur-agent', 'hello');
      assert.ok(sent.ok);
      await h.core.idle(sent.sessionId);
      assert.equal(h.core.appendNote(sent.sessionId, `Legion restored a.txt (the key was ${SECRET})`), true);
      const last = h.core.history(sent.sessionId).at(-1)!;
      assert.equal(last.role, 'user');
      const text = JSON.stringify(last.content);
      assert.ok(text.includes('Legion restored a.txt') && !text.includes(SECRET), text);
      const added = h.events.filter((e) => e.type === 'message-add' && e.sessionId === sent.sessionId).at(-1);
      assert.ok(added && !JSON.stringify(added).includes(SECRET) && JSON.stringify(added).includes('Legion restored a.txt'));
      const onDisk = readFileSync(h.layout.sessionFile(h.runId, sent.sessionId), 'utf8');
      assert.ok(onDisk.includes('Legion restored a.txt') && !onDisk.includes(SECRET));
      assert.equal(h.core.appendNote('session-user__nobody__default', 'x'), false);
    } finally {
      await h.close();
    }
  });
});
