import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withTempDir } from '../../../helpers/tmp';
import { createAuthorizer, workspaceRealPath } from '../../../../src/authz/authorizer';
import { createAllowanceSet } from '../../../../src/authz/allowances';
import { personOnly } from '../../../../src/authz/policy';
import { workspaceHooksPaths } from '../../../../src/tools/sandbox/git-guard';
import type { Participant } from '../../../../src/collective/participant';
import { rulesFrom } from '../../../helpers/rules';

const writer: Participant = { id: 'dev', kind: 'agent', name: 'dev', description: '', status: 'active', systemPrompt: 'x', provider: 'default', model: 'default', tools: ['file_read', 'file_write', 'file_edit', 'file_delete'], toolAuthorizations: { 'file_*': 'auto' }, approvalAuthority: [] };

/**
 * The file tools write outside the sandbox, so what git runs from outside `.git/` — the
 * repository's `core.hooksPath` folder, the files its config includes, the user's own git config
 * when the workspace holds it — is a person's to approve, as `.git/` is (git-internals-ask):
 * rules and a policy that allow writes, and a session allowance, do not lift it; a path through
 * a symbolic link into it, or a new file there, is the same. End to end:
 * test/integration/runtime/hostile-git-config-paths.test.ts.
 */
test('file changes to git\'s hooks folder, an included config or the user\'s git config ask a person, whatever allows writes', async () => {
  await withTempDir(async (root) => {
    await mkdir(join(root, '.git'));
    await writeFile(join(root, '.git', 'config'), '[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../shared.gitconfig\n');
    await mkdir(join(root, '.githooks'));
    await writeFile(join(root, '.githooks', 'pre-commit'), '#!/bin/sh\n');
    await mkdir(join(root, 'dotfiles'));
    await symlink(join(root, '.githooks'), join(root, 'scripts'));
    const env = { HOME: root, GIT_CONFIG_GLOBAL: join(root, 'dotfiles', 'gitconfig') };
    const ruleSet = rulesFrom('version: 1\ndefaults: { unmatched: allow }\nrules:\n  - { id: writes, decision: allow, tool: "file_*" }\n');
    const allowances = createAllowanceSet();
    const authorize = createAuthorizer({ ruleSet, workspaceRoot: root, realPath: workspaceRealPath(root), getParticipant: () => writer, allowances, gitConfigPaths: (r) => workspaceHooksPaths(r, env) });
    const call = (toolName: string, path: string) => authorize({ toolName, input: { path, content: 'x', old_string: 'a', new_string: 'b' }, participantId: 'dev', sessionId: 's', chain: ['user', 'dev'] });
    allowances.add({ toolName: 'file_write', input: { path: '.githooks/pre-commit' }, participantId: 'dev', sessionId: 's', chain: ['user', 'dev'] }, root, { grantedBy: 'user', at: new Date() });
    for (const [tool, path] of [
      ['file_write', '.githooks/pre-commit'], ['file_edit', '.githooks/pre-commit'], ['file_delete', '.githooks/pre-commit'],
      ['file_write', '.githooks/post-checkout'], ['file_write', `${root}/.githooks/x`], ['file_write', 'scripts/pre-push'],
      ['file_write', 'shared.gitconfig'], ['file_write', 'dotfiles/gitconfig'],
    ] as const) {
      const verdict = call(tool, path);
      assert.deepEqual([verdict.decision, verdict.ruleId, personOnly(verdict)], ['ask', 'git-internals-ask', true], `${tool} ${path}: ${verdict.reason}`);
    }
    for (const path of ['notes.txt', '.githooks-notes.txt', 'dotfiles/bashrc']) assert.equal(call('file_write', path).decision, 'allow', path);
    assert.equal(call('file_read', '.githooks/pre-commit').decision, 'allow', 'reading is not changing');
  });
});
