import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createAuthorizer, WORKTREE_RULE_ID } from '../../../../src/authz/authorizer';
import type { Agent } from '../../../../src/collective/participant';
import type { CallToAuthorize } from '../../../../src/authz/types';
import { rulesFrom, shippedRules, SHIPPED_RULES, WORKSPACE } from '../../../helpers/rules';
import { readFileSync } from 'node:fs';

/** Free inside, reviewed at the door (docs/worktrees.md): the shipped fallbacks' ask becomes an allow in a worktree, nothing else changes. */
const WT = `${WORKSPACE}/.legion/worktrees/session-lead__alice__a`;
const alice: Agent = {
  id: 'alice', kind: 'agent', name: 'alice', description: '', status: 'active', systemPrompt: 'x', provider: 'default', model: 'default',
  tools: ['file_read', 'file_write', 'file_edit', 'file_delete', 'shell'], toolAuthorizations: {}, approvalAuthority: [],
};
const call = (toolName: string, input: unknown, isolated: boolean): CallToAuthorize => ({
  toolName, input, participantId: 'alice', sessionId: 'session-lead__alice__a', chain: ['user', 'lead', 'alice'], ...(isolated ? { isolatedRoot: WT } : {}),
});

test('an isolated session writes, edits and deletes in its worktree without asking; the same calls ask outside it', () => {
  const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), workspaceRoot: WORKSPACE, getParticipant: () => alice });
  for (const [tool, input] of [
    ['file_write', { path: 'src/a.ts', content: 'x' }],
    ['file_edit', { path: 'src/a.ts', oldString: 'a', newString: 'b' }],
    ['file_delete', { path: 'src/a.ts' }],
    ['file_write', { path: `${WT}/src/abs.ts`, content: 'x' }],
  ] as const) {
    const outside = authorize(call(tool, input, false)).decision;
    assert.equal(outside, input.path.startsWith('/') ? 'deny' : 'ask', `${tool} outside a worktree asks (an absolute path into .legion/ is denied)`);
    const inside = authorize(call(tool, input, true));
    assert.equal(inside.decision, 'allow', `${tool} ${JSON.stringify(input)} inside`);
    assert.equal(inside.ruleId, WORKTREE_RULE_ID);
  }
});

test('in a worktree the shell keeps its rules; secrets, .git and leaving the worktree are refused as before', () => {
  const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), workspaceRoot: WORKSPACE, getParticipant: () => alice });
  assert.equal(authorize(call('shell', { command: 'npm install' }, true)).decision, 'ask');
  assert.equal(authorize(call('shell', { command: 'rm -rf /' }, true)).decision, 'deny');
  assert.equal(authorize(call('file_write', { path: '.env', content: 'x' }, true)).decision, 'deny');
  assert.equal(authorize(call('file_write', { path: '.git/hooks/pre-commit', content: 'x' }, true)).decision, 'ask');
  const out = authorize(call('file_write', { path: `${WORKSPACE}/src/a.ts`, content: 'x' }, true));
  assert.equal(out.decision, 'deny', 'the real workspace is outside the worktree');
  assert.equal(out.source, 'confinement');
  assert.equal(authorize(call('file_write', { path: '../../../src/a.ts', content: 'x' }, true)).decision, 'deny');
  assert.equal(authorize(call('file_write', { path: '.legion/x', content: 'x' }, true)).decision, 'deny');
});

test("a user's own ask rule and an agent's policy still hold in a worktree", () => {
  const shipped = readFileSync(SHIPPED_RULES, 'utf8');
  const mine = 'version: 1\nrules:\n  - { id: docs-ask, decision: ask, tool: file_write, match: { path: "docs/**" }, reason: docs are reviewed }\n';
  const ruleSet = rulesFrom(shipped, mine);
  const strict: Agent = { ...alice, toolAuthorizations: { file_delete: 'requires_approval' } };
  const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet, workspaceRoot: WORKSPACE, getParticipant: () => strict });
  assert.equal(authorize(call('file_write', { path: 'docs/a.md', content: 'x' }, true)).ruleId, 'docs-ask');
  assert.equal(authorize(call('file_delete', { path: 'a.txt' }, true)).decision, 'ask');
  assert.equal(authorize(call('file_write', { path: 'a.txt', content: 'x' }, true)).decision, 'allow');
});
