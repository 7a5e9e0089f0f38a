import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { approverLadder, chooseApprover, createApproverPolicy, hasAuthority, nextApprover } from '../../../src/authz/approver';
import type { ApproverPolicy } from '../../../src/runtime/ports';
import type { Agent, Participant } from '../../../src/collective/participant';

function agent(id: string, approvalAuthority: Agent['approvalAuthority'], extra: Partial<Agent> = {}): Agent {
  return {
    id, kind: 'agent', name: id, description: '', status: 'active', systemPrompt: 'x', provider: 'default', model: 'default',
    tools: ['communicator', 'resolve_approval'], toolAuthorizations: {}, approvalAuthority, ...extra,
  };
}

const people: Participant[] = [
  { id: 'user', kind: 'user', name: 'You', description: '', status: 'active', approvalAuthority: '*' },
  agent('ur-agent', '*'),
  agent('lead', ['file_*', 'mcp__git__*']),
  agent('planner', []),
  agent('deaf', '*', { tools: ['communicator'] }),
  agent('gone', '*', { status: 'retired' }),
  agent('reviewer', ['shell']),
  agent('scribe', ['file_write']),
];
const getParticipant = (id: string) => people.find((p) => p.id === id);

test('hasAuthority: * and micromatch globs', () => {
  assert.equal(hasAuthority(getParticipant('lead')!, 'file_write'), true);
  assert.equal(hasAuthority(getParticipant('lead')!, 'mcp__git__push'), true);
  assert.equal(hasAuthority(getParticipant('lead')!, 'shell'), false);
  assert.equal(hasAuthority(getParticipant('planner')!, 'file_write'), false);
  assert.equal(hasAuthority(getParticipant('user')!, 'anything'), true);
});

const cases: Array<{ name: string; chain: string[]; tool: string; explicit?: string; expect: string }> = [
  { name: 'nearest caller with authority', chain: ['user', 'ur-agent', 'lead', 'scribe'], tool: 'file_write', expect: 'lead' },
  { name: 'skips a caller without authority for this tool', chain: ['user', 'ur-agent', 'lead', 'scribe'], tool: 'shell', expect: 'ur-agent' },
  { name: 'skips a caller with no authority at all', chain: ['user', 'ur-agent', 'planner', 'scribe'], tool: 'shell', expect: 'ur-agent' },
  { name: 'skips a caller without resolve_approval', chain: ['user', 'ur-agent', 'deaf', 'scribe'], tool: 'shell', expect: 'ur-agent' },
  { name: 'skips a retired caller', chain: ['user', 'ur-agent', 'gone', 'scribe'], tool: 'shell', expect: 'ur-agent' },
  { name: 'skips an unknown caller', chain: ['user', 'ghost', 'scribe'], tool: 'shell', expect: 'user' },
  { name: 'never the asker itself, even with authority', chain: ['user', 'planner', 'scribe'], tool: 'file_write', expect: 'user' },
  { name: 'asker re-entered further up is still skipped', chain: ['user', 'scribe', 'planner', 'scribe'], tool: 'file_write', expect: 'user' },
  { name: 'the user when the chain is just the user', chain: ['user', 'ur-agent'], tool: 'shell', expect: 'user' },
  { name: 'the user when no one up the chain holds authority', chain: ['user', 'planner', 'reviewer', 'scribe'], tool: 'file_delete', expect: 'user' },
  { name: 'the user even when absent from the chain', chain: ['planner', 'scribe'], tool: 'shell', expect: 'user' },
  { name: 'explicit approver first', chain: ['user', 'ur-agent', 'lead', 'scribe'], tool: 'shell', explicit: 'reviewer', expect: 'reviewer' },
  { name: 'explicit user', chain: ['user', 'ur-agent', 'lead', 'scribe'], tool: 'file_write', explicit: 'user', expect: 'user' },
  { name: 'explicit but retired → cascade', chain: ['user', 'ur-agent', 'lead', 'scribe'], tool: 'file_write', explicit: 'gone', expect: 'lead' },
  { name: 'explicit but unknown → cascade', chain: ['user', 'ur-agent', 'scribe'], tool: 'shell', explicit: 'nobody', expect: 'ur-agent' },
  { name: 'explicit without authority for the tool → cascade', chain: ['user', 'ur-agent', 'scribe'], tool: 'file_write', explicit: 'reviewer', expect: 'ur-agent' },
  { name: 'explicit but cannot answer → cascade', chain: ['user', 'ur-agent', 'scribe'], tool: 'shell', explicit: 'deaf', expect: 'ur-agent' },
  { name: 'explicit naming the asker → cascade', chain: ['user', 'lead', 'scribe'], tool: 'file_write', explicit: 'scribe', expect: 'lead' },
];

for (const c of cases) {
  test(`chooseApprover: ${c.name}`, () => {
    const got = chooseApprover({ chain: c.chain, toolName: c.tool, getParticipant, ...(c.explicit ? { explicitApprover: c.explicit } : {}) });
    assert.equal(got, c.expect);
  });
}

test('approverLadder lists each able caller once, nearest first, ending with user', () => {
  const chain = ['user', 'ur-agent', 'lead', 'planner', 'lead', 'reviewer', 'scribe'];
  assert.deepEqual(approverLadder({ chain, toolName: 'file_edit', getParticipant }), ['lead', 'ur-agent', 'user']);
  assert.deepEqual(approverLadder({ chain, toolName: 'shell', getParticipant }), ['reviewer', 'ur-agent', 'user']);
});

test('nextApprover climbs the ladder to the user, then stops', () => {
  const q = { chain: ['user', 'ur-agent', 'lead', 'scribe'], toolName: 'file_write', getParticipant };
  assert.equal(nextApprover('lead', q), 'ur-agent');
  assert.equal(nextApprover('ur-agent', q), 'user');
  assert.equal(nextApprover('user', q), null);
});

test('nextApprover from an explicit approver outside the chain starts at the nearest able caller', () => {
  const q = { chain: ['user', 'ur-agent', 'lead', 'scribe'], toolName: 'shell', getParticipant };
  assert.equal(nextApprover('reviewer', q), 'ur-agent');
});

test('nextApprover from a caller that lost the right to answer goes above it, not back down', () => {
  const mutable = people.map((p) => ({ ...p })) as Participant[];
  const get = (id: string) => mutable.find((p) => p.id === id);
  const q = { chain: ['user', 'ur-agent', 'planner', 'lead', 'scribe'], toolName: 'file_write', getParticipant: get };
  assert.equal(chooseApprover(q), 'lead');
  (get('lead') as { status: string }).status = 'retired';
  assert.equal(nextApprover('lead', q), 'ur-agent');
  (get('ur-agent') as { status: string }).status = 'retired';
  assert.equal(nextApprover('lead', q), 'user');
});

test('createApproverPolicy binds the registry and fits the runtime ApproverPolicy port', () => {
  const policy: ApproverPolicy = createApproverPolicy(getParticipant);
  const q = { chain: ['user', 'ur-agent', 'lead', 'scribe'], toolName: 'file_write' };
  assert.equal(policy.choose(q), 'lead');
  assert.equal(policy.choose({ ...q, explicitApprover: 'ur-agent' }), 'ur-agent');
  assert.equal(policy.next('lead', q), 'ur-agent');
});
