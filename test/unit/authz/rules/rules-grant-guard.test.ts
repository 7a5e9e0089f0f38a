import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkGrant, checkRetire, covers, grantGuard } from '../../../../src/authz/grant-guard';
import type { Agent, Participant } from '../../../../src/collective/participant';

function agent(id: string, fields: Partial<Agent> = {}): Agent {
  return {
    id, kind: 'agent', name: id, description: '', status: 'active', systemPrompt: 'x', provider: 'default', model: 'default',
    tools: [], toolAuthorizations: {}, approvalAuthority: [], ...fields,
  };
}
const USER: Participant = { id: 'user', kind: 'user', name: 'You', description: '', status: 'active', approvalAuthority: '*' };

const lead = agent('lead', {
  tools: ['file_read', 'file_write', 'shell', 'mcp__github__*', 'spawn_agent', 'modify_agent'],
  toolAuthorizations: { shell: 'requires_approval' },
  approvalAuthority: ['file_*'],
});
const error = (result: ReturnType<typeof checkGrant>) => (result.ok ? 'ok' : result.error);

test('covers: conservative glob comparison', () => {
  assert.equal(covers(['file_read'], 'file_read'), true);
  assert.equal(covers(['file_*'], 'file_read'), true);
  assert.equal(covers(['file_*'], 'file_*'), true);
  assert.equal(covers(['mcp__*'], 'mcp__github__*'), true);
  assert.equal(covers(['mcp__github__*'], 'mcp__*'), false);
  assert.equal(covers(['file_read'], 'file_*'), false);
  assert.equal(covers(['file_read', 'file_write'], 'file_*'), false); // would also grant file_delete
  assert.equal(covers(['*'], 'anything_*'), true);
  assert.equal(covers('*', 'shell'), true);
  assert.equal(covers(['{file_read,shell}'], 'file_*'), false);
});

test('checkGrant: the user may grant anything', () => {
  assert.equal(error(checkGrant(USER, { tools: ['*'], approvalAuthority: '*', toolAuthorizations: { '*': 'auto' } })), 'ok');
});

test('checkGrant: an agent grants no tool and no authority beyond its own', () => {
  const table: [Parameters<typeof checkGrant>[1], string][] = [
    [{ tools: ['file_read'] }, 'ok'],
    [{ tools: ['file_read', 'mcp__github__create_issue', 'mcp__github__*'] }, 'ok'],
    [{ tools: ['file_read', 'file_delete'] }, 'cannot grant tools you do not hold: file_delete'],
    [{ tools: ['file_*'] }, 'cannot grant tools you do not hold: file_*'],
    [{ tools: ['*'] }, 'cannot grant tools you do not hold: *'],
    [{ tools: ['mcp__*'] }, 'cannot grant tools you do not hold: mcp__*'],
    [{ tools: ['fіle_read'] }, 'cannot grant tools you do not hold: fіle_read'], // Cyrillic і
    [{ approvalAuthority: [] }, 'ok'],
    [{ approvalAuthority: ['file_read', 'file_*'] }, 'ok'],
    [{ approvalAuthority: ['shell'] }, 'cannot grant approvalAuthority beyond your own: shell'],
    [{ approvalAuthority: '*' }, 'cannot grant approvalAuthority beyond your own: *'],
    [{ tools: ['shell'], toolAuthorizations: { shell: 'requires_approval' } }, 'ok'],
    [{ tools: ['shell'], toolAuthorizations: { shell: 'deny' } }, 'ok'],
    [{ tools: ['shell'] }, 'cannot set a looser policy for "shell" (none) than your own (requires_approval)'],
    [{ tools: ['shell'], toolAuthorizations: { shell: 'auto' } }, 'cannot set a looser policy for "shell" (auto) than your own (requires_approval)'],
    [{ tools: ['shell'], toolAuthorizations: { '*': 'requires_approval', shell: 'auto' } }, 'ok'], // strictest glob wins
    [{ tools: ['file_read'], toolAuthorizations: { file_read: 'auto' } }, 'cannot set a looser policy for "file_read" (auto) than your own (none)'],
  ];
  for (const [requested, expected] of table) assert.equal(error(checkGrant(lead, requested)), expected, JSON.stringify(requested));
});

test('checkGrant: an agent holding "*" authority may grant "*"; the user holds all', () => {
  const approver = agent('approver', { approvalAuthority: '*', tools: ['*'] });
  assert.equal(error(checkGrant(approver, { approvalAuthority: '*', tools: ['shell', 'file_*'] })), 'ok');
});

test('checkGrant: no self-promotion, no steering a stronger agent, never the user', () => {
  assert.equal(error(checkGrant(lead, { approvalAuthority: ['file_*', 'file_read'] }, lead)), 'an agent cannot change its own approvalAuthority');
  assert.equal(error(checkGrant(lead, { approvalAuthority: [] }, lead)), 'an agent cannot change its own approvalAuthority');
  assert.equal(error(checkGrant(lead, { approvalAuthority: ['file_*'] }, lead)), 'ok'); // unchanged
  assert.equal(error(checkGrant(lead, { tools: ['file_read'] }, lead)), 'ok');
  const strong = agent('strong', { tools: ['file_delete'] });
  assert.equal(error(checkGrant(lead, { tools: ['file_read'] }, strong)), 'cannot change "strong": it holds tools you do not (file_delete)');
  const approver = agent('approver', { approvalAuthority: ['shell'] });
  assert.equal(error(checkGrant(lead, {}, approver)), 'cannot change "approver": it holds approvalAuthority you do not (shell)');
  const weak = agent('weak', { tools: ['file_read'] });
  assert.equal(error(checkGrant(lead, { tools: ['file_read', 'file_write'] }, weak)), 'ok');
  assert.equal(error(checkGrant(lead, { tools: ['shell'] }, weak)), 'cannot set a looser policy for "shell" (none) than your own (requires_approval)');
  assert.equal(error(checkGrant(USER, {}, USER)), '"user" is the user, not an agent: it cannot be modified');
  assert.equal(error(checkGrant(lead, {}, USER)), '"user" is the user, not an agent: it cannot be modified');
});

test('checkRetire: nobody retires the user or ur-agent', () => {
  assert.equal(error(checkRetire(USER, USER)), 'the user cannot be retired');
  assert.equal(error(checkRetire(USER, agent('ur-agent'))), "ur-agent cannot be retired: it is the user's entry point");
  assert.equal(error(checkRetire(lead, agent('ur-agent'))), "ur-agent cannot be retired: it is the user's entry point");
  assert.equal(error(checkRetire(lead, agent('helper'))), 'ok');
  assert.equal(error(checkRetire(lead, lead)), 'ok');
});

test('grantGuard: the runtime port shape (null = allowed)', () => {
  const proposed = agent('helper', { tools: ['file_read'], toolAuthorizations: {} });
  assert.equal(grantGuard.grant(lead, proposed, undefined), null);
  assert.equal(grantGuard.grant(lead, { ...proposed, tools: ['file_delete'] }, undefined), 'cannot grant tools you do not hold: file_delete');
  assert.equal(grantGuard.grant(lead, { ...lead, approvalAuthority: '*' }, lead), 'an agent cannot change its own approvalAuthority');
  assert.equal(grantGuard.retire(lead, USER), 'the user cannot be retired');
  assert.equal(grantGuard.retire(lead, proposed), null);
});
