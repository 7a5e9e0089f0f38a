import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startAppHarness } from '../../helpers/app-harness';
import { eventsOf } from '../../helpers/runtime-assert';
import { withTempDir } from '../../helpers/tmp';
import { makeRepo } from '../../unit/worktrees/helpers';

/**
 * A merge request brings an isolated session's files into the workspace, written by Legion. An
 * agent approver with authority over `merge` decided it whatever the files were: a `lib/HEAD`
 * (with objects/ and a config, a folder git takes for a repository and whose core.fsmonitor it
 * runs) is what git-internals-ask (approver: user) keeps for a person when a file tool writes it.
 * A merge holding a file only a person may write goes to the user, not to the agent approver.
 */
test('a merge request whose files include one only a person may write (git-internals-ask) goes to the user, not the agent approver', async () => {
  const script = `
replies:
  - { agent: lead, on: message, toolCalls: [{ name: communicator, input: { targetId: alice, sessionName: a, isolation: worktree, message: "alice's part" } }] }
  - { agent: alice, on: message, toolCalls: [{ name: file_write, input: { path: lib/HEAD, content: "ref: refs/heads/main\\n" } }, { name: file_write, input: { path: alice.txt, content: "hi\\n" } }] }
  - { agent: alice, on: tool-result, text: "alice finished" }
  - { agent: lead, on: tool-result, repeat: true, text: "lead done" }
  - { agent: lead, on: tool-error, repeat: true, text: "lead done" }
`;
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const agents = [
      { id: 'lead', tools: ['communicator', 'resolve_approval'], approvalAuthority: ['merge'] },
      { id: 'alice', tools: ['file_write'] },
    ];
    // The user (headless) approves everything that reaches them: the point is who is asked.
    const h = await startAppHarness({ dir, agents, script, headless: { approve: 'all' } });
    const sent = h.core.send('lead', 'go');
    assert.ok(sent.ok);
    await h.core.idle(sent.sessionId);
    const merges = eventsOf(h.events, 'approval-request').filter((e) => e.toolName === 'merge');
    assert.ok(merges.length > 0);
    assert.deepEqual([...new Set(merges.map((m) => m.approverId))], ['user'], 'a merge writing lib/HEAD is a person\'s to approve, first and last');
    assert.ok(existsSync(join(dir, 'alice.txt')));
    await h.close();
  });
});
