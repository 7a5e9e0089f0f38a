import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAuthorizer } from '../../../../src/authz/authorizer';
import { createAllowanceSet } from '../../../../src/authz/allowances';
import type { Agent, Participant } from '../../../../src/collective/participant';
import type { CallToAuthorize } from '../../../../src/authz/types';
import { shippedRules, WORKSPACE } from '../../../helpers/rules';

// "a" in the approval queue on a write allows writes in that file's directory for the session.
// git-internals-ask says a write that can make git run code "always asks, even if you allow
// writes": a nested repository's or a submodule's `.git/config` (core.fsmonitor, run by your
// next `git status`), or a `.git` file redirecting git, must not ride on an allowance granted
// for a README next to it.
const DEV: Agent = {
  id: 'dev', kind: 'agent', name: 'dev', description: '', status: 'active', systemPrompt: 'x', provider: 'default', model: 'default',
  tools: ['file_write', 'file_edit', 'shell'], toolAuthorizations: {}, approvalAuthority: [],
};
const people = (id: string): Participant | undefined => (id === 'dev' ? DEV : undefined);
const call = (toolName: string, input: Record<string, unknown>): CallToAuthorize => ({ toolName, input, participantId: 'dev', sessionId: 's', chain: ['user', 'dev'] });
const write = (path: string) => call('file_write', { path, content: '[core]\n\tfsmonitor = "touch /tmp/PWNED; false"\n' });

test('a session allowance for writes in a folder does not lift git-internals-ask there', () => {
  const allowances = createAllowanceSet();
  const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), getParticipant: people, workspaceRoot: WORKSPACE, allowances });
  assert.equal(authorize(write('libs/foo/README.md')).ruleId, 'writes-ask');
  for (const p of ['libs/foo/README.md', 'README.md']) assert.ok(allowances.add(write(p), WORKSPACE).ok);
  // What the user allowed: more writes in those folders.
  for (const p of ['libs/foo/notes.md', 'libs/foo/src/a.ts', 'README2.md', '.gitattributes']) {
    assert.deepEqual([p, authorize(write(p)).decision], [p, 'allow']);
  }
  assert.equal(authorize(call('file_edit', { path: 'libs/foo/notes.md', oldString: 'a', newString: 'b' })).ruleId, 'edits-ask', 'an allowance is per tool');
  // What it did not: git's own files in them.
  for (const p of ['libs/foo/.git/config', 'libs/foo/.git', 'libs/foo/.git/hooks/pre-commit', '.git']) {
    const verdict = authorize(write(p));
    assert.deepEqual([p, verdict.decision, verdict.ruleId], [p, 'ask', 'git-internals-ask']);
  }
});

test('allowances the size of the approved call still lift what asked it', () => {
  const allowances = createAllowanceSet();
  const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), getParticipant: people, workspaceRoot: WORKSPACE, allowances });
  const line = call('shell', { command: 'cat .env.example' });
  assert.equal(authorize(line).decision, 'ask');
  assert.ok(allowances.add(line, WORKSPACE).ok);
  assert.equal(authorize(line).decision, 'allow');
  assert.equal(authorize(call('shell', { command: 'cat .env' })).decision, 'ask');
});

// git takes a folder holding HEAD and objects/ (or a commondir) for a git directory with no
// `.git` anywhere: `git status` run there (by you, or by your prompt as you enter it) reads its
// `config`, core.worktree and core.fsmonitor included, and runs that outside the sandbox. Writing
// `sub/HEAD` is how file tools make one, so it asks like a write under .git/, allowance or not.
test('writing a HEAD or a commondir, which make a folder a git directory, asks as git-internals-ask', () => {
  const allowances = createAllowanceSet();
  const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), getParticipant: people, workspaceRoot: WORKSPACE, allowances });
  assert.ok(allowances.add(write('sub/notes.md'), WORKSPACE).ok);
  assert.equal(authorize(write('sub/objects/keep')).decision, 'allow');
  for (const p of ['sub/HEAD', 'sub/deeper/HEAD', 'HEAD', 'sub/commondir', 'sub/head']) {
    const verdict = authorize(write(p));
    assert.deepEqual([p, verdict.decision, verdict.ruleId], [p, 'ask', 'git-internals-ask']);
  }
  assert.equal(authorize(call('file_edit', { path: 'sub/HEAD', oldString: 'a', newString: 'b' })).ruleId, 'git-internals-ask');
  assert.equal(authorize(write('sub/HEADER.md')).decision, 'allow');
});
