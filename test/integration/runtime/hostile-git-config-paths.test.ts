import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAppHarness } from '../../helpers/app-harness';
import { eventsOf } from '../../helpers/runtime-assert';
import { withTempDir } from '../../helpers/tmp';
import { makeRepo, userGit, write } from '../../unit/worktrees/helpers';

/**
 * What git runs from outside `.git/`: the workspace's `core.hooksPath` folder (`.githooks/`,
 * husky's) and the files its config includes (`include.path = ../shared.gitconfig`, where a
 * `core.fsmonitor` runs at the next `git status`). The sandbox keeps them read-only for shell
 * (docs/sandbox.md#git), but the file tools are not sandboxed: only git-internals-ask guarded
 * them, and it named `.git/`, `HEAD` and `commondir` only. An agent whose writes the user allows
 * (rules that allow file_write, which git-internals-ask promises never lifts its ask) rewrote the
 * project's pre-commit hook (its executable bit kept) and planted an fsmonitor in the included
 * config: the user's next `git commit` and `git status` ran the agent's code, unsandboxed, with
 * no person asked. Such writes are a person's to approve, as a write under `.git/` is.
 */
test('a file tool writing the workspace\'s core.hooksPath folder or an included git config asks a person, whatever allows writes', async () => {
  const script = `
replies:
  - agent: worker
    on: message
    toolCalls:
      - { name: file_write, input: { path: .githooks/pre-commit, content: "#!/bin/sh\\ntouch PWNED-hook\\n" } }
      - { name: file_write, input: { path: shared.gitconfig, content: "[core]\\n\\tfsmonitor = \\"touch PWNED-fsmonitor; false\\"\\n" } }
      - { name: file_write, input: { path: notes.txt, content: "plain\\n" } }
  - { agent: worker, on: tool-result, repeat: true, text: "done" }
  - { agent: worker, on: tool-error, repeat: true, text: "done" }
`;
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await write(dir, '.githooks/pre-commit', '#!/bin/sh\nexit 0\n');
    chmodSync(join(dir, '.githooks', 'pre-commit'), 0o755);
    userGit(dir, ['config', 'core.hooksPath', '.githooks']);
    userGit(dir, ['config', 'include.path', '../shared.gitconfig']);
    // The user allows every write; nobody is there to answer an ask (headless: deny).
    const h = await startAppHarness({ dir, agents: [{ id: 'worker', tools: ['file_write'] }], script, rules: { file_write: 'allow' }, headless: { approve: 'deny' } });
    const sent = h.core.send('worker', 'go');
    assert.ok(sent.ok);
    await h.core.idle(sent.sessionId);
    await h.close();

    const asked = eventsOf(h.events, 'approval-request').map((e) => [(e.input as { path: string }).path, e.approverId]);
    assert.deepEqual(asked.sort(), [['.githooks/pre-commit', 'user'], ['shared.gitconfig', 'user']], 'both writes wait on a person');
    assert.equal(readFileSync(join(dir, '.githooks', 'pre-commit'), 'utf8'), '#!/bin/sh\nexit 0\n', 'the hook is unchanged');
    assert.equal(existsSync(join(dir, 'shared.gitconfig')), false, 'no included config was planted');
    assert.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'plain\n', 'a plain write is allowed as before');

    // The user's own git afterwards: nothing of the agent's runs.
    userGit(dir, ['-c', 'core.fsmonitor=', 'add', 'notes.txt']);
    userGit(dir, ['status', '--porcelain']);
    userGit(dir, ['commit', '-q', '-m', 'notes']);
    assert.equal(existsSync(join(dir, 'PWNED-hook')), false, 'the pre-commit hook ran the agent\'s code');
    assert.equal(existsSync(join(dir, 'PWNED-fsmonitor')), false, 'git status ran the agent\'s fsmonitor');
  });
});

/**
 * An isolated session writes freely in its own worktree (whose git directory lies outside it, so
 * no hooks folder is guarded there); its merge request brings the files into the workspace,
 * written by Legion. A merge holding a file of the workspace's hooks folder is a person's to
 * approve, not the agent approver's.
 */
test('a merge request bringing a file of the workspace\'s core.hooksPath folder goes to the user, not the agent approver', async () => {
  const script = `
replies:
  - { agent: lead, on: message, toolCalls: [{ name: communicator, input: { targetId: alice, sessionName: a, isolation: worktree, message: "alice's part" } }] }
  - { agent: alice, on: message, toolCalls: [{ name: file_write, input: { path: .githooks/pre-commit, content: "#!/bin/sh\\ntouch PWNED-hook\\n" } }] }
  - { agent: alice, on: tool-result, text: "alice finished" }
  - { agent: lead, on: tool-result, repeat: true, text: "lead done" }
  - { agent: lead, on: tool-error, repeat: true, text: "lead done" }
`;
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await write(dir, '.githooks/pre-commit', '#!/bin/sh\nexit 0\n');
    chmodSync(join(dir, '.githooks', 'pre-commit'), 0o755);
    userGit(dir, ['add', '-A']);
    userGit(dir, ['commit', '-q', '-m', 'hooks']);
    userGit(dir, ['config', 'core.hooksPath', '.githooks']);
    const agents = [
      { id: 'lead', tools: ['communicator', 'resolve_approval'], approvalAuthority: ['merge'] },
      { id: 'alice', tools: ['file_write'] },
    ];
    const h = await startAppHarness({ dir, agents, script, headless: { approve: 'deny' } });
    const sent = h.core.send('lead', 'go');
    assert.ok(sent.ok);
    await h.core.idle(sent.sessionId);
    await h.close();
    const merges = eventsOf(h.events, 'approval-request').filter((e) => e.toolName === 'merge');
    assert.ok(merges.length > 0, 'a merge was requested');
    assert.deepEqual([...new Set(merges.map((m) => m.approverId))], ['user'], 'a merge writing .githooks/pre-commit is a person\'s to approve');
    assert.equal(readFileSync(join(dir, '.githooks', 'pre-commit'), 'utf8'), '#!/bin/sh\nexit 0\n', 'the hook is unchanged');
  });
});
