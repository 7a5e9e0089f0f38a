import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { withTempDir } from '../../../helpers/tmp';
import { createAuthorizer, workspaceRealPath } from '../../../../src/authz/authorizer';
import { personOnly } from '../../../../src/authz/policy';
import { createHookEngine } from '../../../../src/conventions/hooks/engine';
import type { Participant } from '../../../../src/collective/participant';
import { rulesFrom, shippedRules, SHIPPED_RULES } from '../../../helpers/rules';

const dev: Participant = { id: 'dev', kind: 'agent', name: 'dev', description: '', status: 'active', systemPrompt: 'x', provider: 'default', model: 'default', tools: ['shell'], toolAuthorizations: {}, approvalAuthority: [] };

/**
 * docs/shell-rules.md: a line that is not plain words is answered only by a person (personOnly).
 * A line Legion's parser cannot read at all (arithmetic, `case`, a comment, a function, over
 * 16 KiB) is not known to be plain words either, and bash runs its `$(…)` all the same: it asked
 * ("cannot check this shell command safely") without `notPlain`, so LLM triage or an agent
 * approver could approve `echo hi $(touch PWNED) $((1+2))`.
 */
const UNREADABLE = [
  'echo hi $(touch PWNED) $((1+2))',
  'echo hi $(touch PWNED); case x in x) echo y;; esac',
  'echo hi $(touch PWNED) #(',
  'echo hi $(touch PWNED); f() { :; }',
  `echo hi $(touch PWNED) ${'a'.repeat(17_000)}`,
];

test('a shell line the parser cannot read is answered only by a person (shipped rules, and rules that allow shell)', () => {
  for (const ruleSet of [shippedRules(), rulesFrom('version: 1\ndefaults: { unmatched: allow }\nrules:\n  - { id: all-shell, decision: allow, tool: shell }\n')]) {
    const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet, workspaceRoot: '/ws', getParticipant: (id) => (id === 'dev' ? dev : undefined) });
    for (const command of UNREADABLE) {
      const verdict = authorize({ toolName: 'shell', input: { command }, participantId: 'dev', sessionId: 's', chain: ['user', 'dev'] });
      assert.equal(verdict.decision, 'ask', `${command.slice(0, 60)}: ${verdict.reason.slice(0, 200)}`);
      assert.equal(personOnly(verdict), true, `${command.slice(0, 60)}: only a person may answer (${verdict.reason.slice(0, 200)})`);
    }
  }
});

test('a PreToolUse hook that asks keeps a line that is not plain words for a person', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'ask.sh'), 'echo \'{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"look"}}\'');
    const engine = createHookEngine({
      hooks: [{ event: 'PreToolUse', matcher: 'Bash', command: `bash ${join(dir, 'ask.sh')}`, timeoutMs: 5000, file: 'ask.sh', fromWorkspace: false }],
      root: dir, runId: 'r', transcriptPath: () => '', env: { PATH: process.env.PATH! }, trust: null, notice: () => undefined,
    });
    const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), workspaceRoot: dir, getParticipant: (id) => (id === 'dev' ? dev : undefined) });
    for (const command of ['echo hi $(touch PWNED)', UNREADABLE[0]!]) {
      const verdict = authorize({ toolName: 'shell', input: { command }, participantId: 'dev', sessionId: 's', chain: ['user', 'dev'] });
      assert.equal(personOnly(verdict), true, command);
      const call = { sessionId: 's', participantId: 'dev', initiatorId: 'user', chain: ['user', 'dev'], toolName: 'shell', toolUseId: 't', input: { command } };
      const after = await engine.preToolUse(call, verdict, new AbortController().signal);
      assert.equal(after.decision, 'ask');
      assert.match(after.reason, /a PreToolUse hook asks: look/, 'the hook ran');
      assert.equal(personOnly(after), true, `${command}: the hook's ask must not hand it to triage or an agent`);
    }
  });
});

/**
 * A path through a symbolic link is decided by the stricter of its written and its real path's
 * outcomes; of two asks, the written one was kept, so a user's own ask rule (no approver) on the
 * written path stood in for git-internals-ask (approver: user) on the real one: `scripts/hk` a
 * link to `.git/hooks`, a write of `scripts/hk/pre-commit` went to LLM triage or an agent approver.
 */
test('a write through a link into .git/hooks keeps git-internals-ask\'s person, whatever ask the written path meets', async () => {
  await withTempDir(async (root) => {
    await mkdir(join(root, '.git', 'hooks'), { recursive: true });
    await mkdir(join(root, 'scripts'));
    await symlink(join(root, '.git', 'hooks'), join(root, 'scripts', 'hk'));
    await writeFile(join(root, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\n');
    const ruleSet = rulesFrom(readFileSync(SHIPPED_RULES, 'utf8'), 'version: 1\nrules:\n  - { id: scripts-ask, decision: ask, tool: file_write, match: { path: "scripts/**" }, reason: "scripts run in CI" }\n');
    const writer = { ...dev, tools: ['file_write'] };
    const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet, workspaceRoot: root, realPath: workspaceRealPath(root), getParticipant: (id) => (id === 'dev' ? writer : undefined) });
    const verdict = authorize({ toolName: 'file_write', input: { path: 'scripts/hk/pre-commit', content: '#!/bin/sh\ntouch PWNED\n' }, participantId: 'dev', sessionId: 's', chain: ['user', 'dev'] });
    assert.equal(verdict.decision, 'ask');
    assert.equal(personOnly(verdict), true, `only a person answers a .git/hooks write (${verdict.ruleId}: ${verdict.reason})`);
  });
});

/**
 * A file that does not exist yet has no real path, so only its written path was checked: a new
 * `scripts/hk/pre-commit` (scripts/hk a link to .git/hooks), or a write to `scripts/evil`, a
 * dangling link to `.git/hooks/pre-commit`, which the file tools follow, met only the fallback
 * `writes-ask`: LLM triage or an agent approver answered it, and a session allowance for the
 * folder lifted it without asking.
 */
test('a new file written through a linked folder or a dangling link is checked where it will be made', async () => {
  await withTempDir(async (root) => {
    await mkdir(join(root, '.git', 'hooks'), { recursive: true });
    await mkdir(join(root, 'scripts'));
    await symlink(join(root, '.git', 'hooks'), join(root, 'scripts', 'hk'));
    await symlink('../.git/hooks/pre-commit', join(root, 'scripts', 'evil'));
    await symlink(join(root, '..'), join(root, 'scripts', 'up'));
    const writer = { ...dev, tools: ['file_write'] };
    const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), workspaceRoot: root, realPath: workspaceRealPath(root), getParticipant: (id) => (id === 'dev' ? writer : undefined) });
    const write = (path: string) => authorize({ toolName: 'file_write', input: { path, content: '#!/bin/sh\ntouch PWNED\n' }, participantId: 'dev', sessionId: 's', chain: ['user', 'dev'] });
    for (const path of ['scripts/hk/pre-commit', 'scripts/hk/new/dir/pre-commit', 'scripts/evil', `scripts/hk/${'d/'.repeat(60)}x`]) {
      const verdict = write(path);
      assert.equal(verdict.ruleId, 'git-internals-ask', `${path}: ${verdict.reason}`);
      assert.equal(personOnly(verdict), true, path);
    }
    assert.equal(write('scripts/up/outside.txt').decision, 'deny', 'a new file through a link out of the workspace');
    assert.equal(write('scripts/plain-new.txt').ruleId, 'writes-ask', 'a plain new file is the fallback\'s as before');
  });
});
