import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createAuthorizer, workspaceRealPath } from '../../../../src/authz/authorizer';
import { applyPolicy, policyFor } from '../../../../src/authz/policy';
import { createAllowanceSet } from '../../../../src/authz/allowances';
import type { Agent, Participant } from '../../../../src/collective/participant';
import type { CallToAuthorize } from '../../../../src/authz/types';
import { rulesFrom, shippedRules, WORKSPACE } from '../../../helpers/rules';
import { withTempDir } from '../../../helpers/tmp';

function agent(id: string, fields: Partial<Agent> = {}): Agent {
  return {
    id, kind: 'agent', name: id, description: '', status: 'active', systemPrompt: 'x', provider: 'default', model: 'default',
    tools: ['file_read', 'file_write', 'shell', 'communicator'], toolAuthorizations: {}, approvalAuthority: [], ...fields,
  };
}
const USER: Participant = { id: 'user', kind: 'user', name: 'You', description: '', status: 'active', approvalAuthority: '*' };
const call = (participantId: string, toolName: string, input: unknown, sessionId = 'session-user__a__default'): CallToAuthorize => ({ toolName, input, participantId, sessionId, chain: ['user', participantId] });

test('policyFor: strictest matching glob wins, whatever the order', () => {
  assert.deepEqual(policyFor({ '*': 'auto', 'file_*': 'deny', file_read: 'requires_approval' }, 'file_read'), { level: 'deny', glob: 'file_*' });
  assert.deepEqual(policyFor({ file_read: 'requires_approval', '*': 'auto' }, 'file_read'), { level: 'requires_approval', glob: 'file_read' });
  assert.deepEqual(policyFor({ shell: 'deny' }, 'file_read'), null);
  assert.deepEqual(policyFor(undefined, 'x'), null);
  assert.deepEqual(policyFor({ 'mcp__*': 'auto' }, 'mcp__github__x'), { level: 'auto', glob: 'mcp__*' });
});

test('applyPolicy: policies only tighten rules; they decide where no rule matched; then the default', () => {
  const rule = (decision: 'allow' | 'ask' | 'deny' | null) => ({ decision, ruleId: decision ? 'r' : null, reason: 'why' });
  const p = (level: 'auto' | 'requires_approval' | 'deny') => ({ level, glob: 'g' });
  const table: [ReturnType<typeof rule>, ReturnType<typeof p> | null, 'allow' | 'ask' | 'deny', string, string][] = [
    [rule('deny'), p('auto'), 'deny', 'rule', 'ask'],
    [rule('ask'), p('auto'), 'ask', 'rule', 'ask'],
    [rule('allow'), p('auto'), 'allow', 'rule', 'ask'],
    [rule('allow'), null, 'allow', 'rule', 'ask'],
    [rule('allow'), p('requires_approval'), 'ask', 'policy', 'ask'],
    [rule('allow'), p('deny'), 'deny', 'policy', 'ask'],
    [rule('ask'), p('requires_approval'), 'ask', 'rule', 'ask'],
    [rule('ask'), p('deny'), 'deny', 'policy', 'ask'],
    [rule(null), p('auto'), 'allow', 'policy', 'deny'],
    [rule(null), p('requires_approval'), 'ask', 'policy', 'allow'],
    [rule(null), p('deny'), 'deny', 'policy', 'allow'],
    [rule(null), null, 'allow', 'default', 'allow'],
    [rule(null), null, 'ask', 'default', 'ask'],
    [rule(null), null, 'deny', 'default', 'deny'],
  ];
  for (const [outcome, policy, decision, source, unmatched] of table) {
    const verdict = applyPolicy(outcome, policy, unmatched as 'ask');
    assert.equal(verdict.decision, decision, JSON.stringify({ outcome, policy, unmatched }));
    assert.equal(verdict.source, source, JSON.stringify({ outcome, policy, unmatched }));
    assert.equal(verdict.ruleId, source === 'rule' ? 'r' : null);
  }
});

const RULES = rulesFrom(`
version: 1
defaults: { unmatched: ask }
rules:
  - { id: read, decision: allow, tool: file_read }
  - { id: secrets, decision: deny, tool: "file_read|file_write", match: { path: "**/.env" } }
  - { id: docs, decision: allow, tool: file_write, match: { path: "docs/**" } }
  - { id: review, decision: ask, tool: file_write, match: { path: "docs/rfc/**" }, approver: lead }
  - { id: git, decision: allow, tool: shell, match: { command: "git status" } }
`);

test('authorizer: tools, confinement, rules, policies, default — and which layer decided', () => {
  const writer = agent('writer', { toolAuthorizations: { shell: 'deny', 'file_write': 'requires_approval' } });
  const reader = agent('reader', { tools: ['file_read'] });
  const autoBot = agent('auto-bot', { toolAuthorizations: { '*': 'auto' } });
  const retired = agent('old', { status: 'retired' });
  const participants = new Map<string, Participant>([[writer.id, writer], [reader.id, reader], [autoBot.id, autoBot], [retired.id, retired], [USER.id, USER]]);
  const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet: RULES, workspaceRoot: WORKSPACE, getParticipant: (id) => participants.get(id) });
  const table: [CallToAuthorize, string, string, string | null][] = [
    [call('nobody', 'file_read', { path: 'a' }), 'deny', 'tools', null],
    [call('old', 'file_read', { path: 'a' }), 'deny', 'tools', null],
    [call('reader', 'file_write', { path: 'docs/a', content: '' }), 'deny', 'tools', null],
    [call('reader', 'file_reаd', { path: 'a' }), 'deny', 'tools', null], // look-alike is not among its tools
    [call('reader', 'file_read', { path: '../etc/passwd' }), 'deny', 'confinement', null],
    [call('reader', 'file_read', { path: '/etc/passwd' }), 'deny', 'confinement', null],
    [call('reader', 'file_read', { path: '.legion/collective/participants/user.json' }), 'deny', 'confinement', null],
    [call('reader', 'file_read', { path: '.LEGION/rules.yaml' }), 'deny', 'confinement', null],
    [call('reader', 'file_read', { path: 'src/a.ts' }), 'allow', 'rule', 'read'],
    [call('reader', 'file_read', { path: 'x/.env' }), 'deny', 'rule', 'secrets'],
    [call('writer', 'file_write', { path: 'docs/a.md', content: '' }), 'ask', 'policy', null], // rule allows, policy tightens
    [call('writer', 'shell', { command: 'git status' }), 'deny', 'policy', null],
    [call('writer', 'file_write', { path: 'docs/rfc/1.md', content: '' }), 'ask', 'rule', 'review'],
    [call('auto-bot', 'file_write', { path: 'src/a.ts', content: '' }), 'allow', 'policy', null], // no rule: policy decides
    [call('auto-bot', 'file_write', { path: '.env', content: '' }), 'deny', 'rule', 'secrets'], // auto never beats deny
    [call('auto-bot', 'file_write', { path: 'docs/rfc/x', content: '' }), 'ask', 'rule', 'review'], // nor ask
    [call('auto-bot', 'communicator', { targetId: 'x', message: 'hi' }), 'allow', 'policy', null],
    [call('reader', 'file_read', { path: 42 }), 'allow', 'rule', 'read'], // non-string path: rules see no path
    [call('user', 'shell', { command: 'npm test' }), 'ask', 'default', null], // the user holds every tool; no policy
    [call('user', 'shell', { command: 'git status' }), 'allow', 'rule', 'git'],
  ];
  for (const [c, decision, source, ruleId] of table) {
    const verdict = authorize(c);
    assert.equal(verdict.decision, decision, `${c.participantId} ${c.toolName} ${JSON.stringify(c.input)}: ${verdict.reason}`);
    assert.equal(verdict.source, source, `${c.participantId} ${c.toolName} ${JSON.stringify(c.input)}`);
    assert.equal(verdict.ruleId, ruleId, `${c.participantId} ${c.toolName} ${JSON.stringify(c.input)}`);
  }
  assert.equal(authorize(call('writer', 'file_write', { path: 'docs/rfc/1.md', content: '' })).approver, 'lead');
  assert.match(authorize(call('reader', 'file_write', { path: 'a', content: '' })).reason, /"reader" does not have the tool "file_write"/);
});

test('authorizer: tool globs in a participant\'s tools list', () => {
  const mcp = agent('mcp-user', { tools: ['mcp__github__*'] });
  const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet: RULES, workspaceRoot: WORKSPACE, getParticipant: () => mcp });
  assert.equal(authorize(call('mcp-user', 'mcp__github__create_issue', {})).source, 'default');
  assert.equal(authorize(call('mcp-user', 'mcp__slack__post', {})).source, 'tools');
});

test('authorizer: session allowances only turn an ask into allow, for that participant and session', () => {
  const dev = agent('dev', { toolAuthorizations: { shell: 'deny' } });
  const qa = agent('qa');
  const participants = new Map<string, Participant>([[dev.id, dev], [qa.id, qa]]);
  const allowances = createAllowanceSet();
  const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet: RULES, workspaceRoot: WORKSPACE, getParticipant: (id) => participants.get(id), allowances });
  const npm = call('qa', 'shell', { command: 'npm test' });
  assert.equal(authorize(npm).decision, 'ask');
  assert.ok(allowances.add(npm, WORKSPACE).ok);
  const verdict = authorize(npm);
  assert.equal(verdict.decision, 'allow');
  assert.equal(verdict.source, 'allowance');
  assert.match(verdict.ruleId!, /^session-allow-/);
  assert.equal(authorize({ ...npm, sessionId: 'other' }).decision, 'ask');
  assert.equal(authorize(call('qa', 'shell', { command: 'npm test; rm -rf x' })).decision, 'ask');
  // Never over a deny, whichever layer denied.
  const env = call('qa', 'file_write', { path: '.env', content: 'x' });
  assert.ok(allowances.add(env, WORKSPACE).ok);
  assert.equal(authorize(env).decision, 'deny');
  const devShell = call('dev', 'shell', { command: 'npm test' });
  assert.ok(allowances.add(devShell, WORKSPACE).ok);
  assert.equal(authorize(devShell).decision, 'deny');
  assert.equal(authorize(devShell).source, 'policy');
});

test('authorizer: a symlink does not launder a secret or lead out of the workspace', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, '.env'), 'KEY=1');
    await mkdir(join(dir, 'docs'));
    await symlink(join(dir, '.env'), join(dir, 'docs', 'notes.md'));
    await symlink('/etc', join(dir, 'etc-link'));
    const reader = agent('reader', { tools: ['file_read'] });
    const base = { ruleSet: shippedRules(), workspaceRoot: dir, getParticipant: () => reader, gitConfigPaths: () => [] };
    const lexical = createAuthorizer(base);
    const real = createAuthorizer({ ...base, realPath: workspaceRealPath(dir) });
    assert.equal(lexical(call('reader', 'file_read', { path: 'docs/notes.md' })).decision, 'allow');
    const verdict = real(call('reader', 'file_read', { path: 'docs/notes.md' }));
    assert.equal(verdict.decision, 'deny');
    assert.equal(verdict.ruleId, 'no-secrets');
    const out = real(call('reader', 'file_read', { path: 'etc-link/passwd' }));
    assert.equal(out.decision, 'deny');
    assert.equal(out.source, 'confinement');
    assert.match(out.reason, /symbolic link/);
    assert.equal(real(call('reader', 'file_read', { path: 'docs/new-file.md' })).decision, 'allow');
  });
});
