import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApprovalRequest } from '../../../src/authz/approvals';
import type { OpenCalls } from '../../../src/session/types';
import { leaveOpenFor, resumableChains } from '../../../src/runtime/resume-plan';

const open = (initiatorId: string, responderId: string, name: string, uses: { id: string; name: string; input?: unknown }[]): OpenCalls => ({
  sessionId: `session-${initiatorId}__${responderId}__${name}`,
  key: { initiatorId, responderId, name },
  toolUseIds: uses.map((u) => u.id),
  uses: uses.map((u) => ({ type: 'tool_use', id: u.id, name: u.name, input: u.input ?? {} })),
});
const request = (requestId: string, o: OpenCalls, toolUseId: string, chain: string[]): ApprovalRequest => ({
  requestId, sessionId: o.sessionId, participantId: o.key.responderId, chain, toolUseId, toolName: 'file_write', input: {},
  ruleId: 'r', reason: 'ask', approverId: 'user', at: '2026-11-21T00:00:00.000Z',
});
const talk = (id: string, targetId: string, sessionName?: string) => ({ id, name: 'communicator', input: { targetId, message: 'm', ...(sessionName ? { sessionName } : {}) } });

const root = open('user', 'ur-agent', 'default', [talk('c1', 'scribe', 'docs'), { id: 't1', name: 'todo_write' }]);
const mid = open('ur-agent', 'scribe', 'docs', [talk('c2', 'helper')]);
const leaf = open('scribe', 'helper', 'default', [{ id: 'w1', name: 'file_write' }, { id: 'r1', name: 'file_read' }]);
const everyone = (): boolean => true;

test('a chain user → ur-agent → scribe → helper is rebuilt from the open batches: stages and links', () => {
  const nodes = resumableChains([request('apr-1', leaf, 'w1', ['user', 'ur-agent', 'scribe', 'helper'])], [root, mid, leaf], everyone);
  assert.deepEqual([...nodes.keys()].sort(), [leaf.sessionId, mid.sessionId, root.sessionId].sort());
  assert.equal(nodes.get(leaf.sessionId)!.stage, 'approvals');
  assert.equal(nodes.get(mid.sessionId)!.stage, 'running');
  assert.deepEqual([...nodes.get(root.sessionId)!.children], [['c1', mid.sessionId]]);
  assert.deepEqual([...nodes.get(mid.sessionId)!.children], [['c2', leaf.sessionId]]);
  assert.deepEqual([...leaveOpenFor([request('apr-1', leaf, 'w1', ['user', 'ur-agent', 'scribe', 'helper'])], everyone)([root, mid, leaf, open('user', 'x', 'default', [{ id: 'z', name: 'shell' }])])].sort(), [leaf.sessionId, mid.sessionId, root.sessionId].sort());
});

test('a chain is not rebuilt when a link is missing, ambiguous, wrongly named, inactive, asks itself, or does not start at the user', () => {
  const pending = [request('apr-1', leaf, 'w1', ['user', 'ur-agent', 'scribe', 'helper'])];
  const cases: [string, OpenCalls[], (id: string) => boolean, ApprovalRequest[]?][] = [
    ['the caller answered its call (not open)', [root, leaf], everyone],
    ['the root answered', [mid, leaf], everyone],
    ['another session name', [root, open('ur-agent', 'scribe', 'docs', [talk('c2', 'helper', 'other')]), leaf], everyone],
    ['two callers could be waiting', [root, mid, open('ur-agent', 'scribe', 'notes', [talk('c3', 'helper')]), leaf].map((o) => o), everyone],
    ['an inactive agent on the chain', [root, mid, leaf], (id) => id !== 'scribe'],
    ['the asking agent is inactive', [root, mid, leaf], (id) => id !== 'helper'],
    ['a caller with its own pending request', [root, mid, leaf], everyone, [...pending, request('apr-2', mid, 'c2', ['user', 'ur-agent', 'scribe'])]],
    ['the call is not in the open batch', [root, mid, leaf], everyone, [request('apr-1', leaf, 'gone', ['user', 'ur-agent', 'scribe', 'helper'])]],
    ['a chain that does not match the session', [root, mid, leaf], everyone, [request('apr-1', leaf, 'w1', ['user', 'helper'])]],
  ];
  for (const [what, opens, active, requests] of cases) {
    const nodes = resumableChains(requests ?? pending, opens, active);
    assert.equal(nodes.has(leaf.sessionId), false, what);
  }
  // Not starting at the user: an agent-initiated session at the top.
  const top = open('cron', 'ur-agent', 'default', [talk('c1', 'scribe', 'docs')]);
  assert.equal(resumableChains([request('apr-1', leaf, 'w1', ['cron', 'ur-agent', 'scribe', 'helper'])], [top, mid, leaf], everyone).size, 0);
});

test('the user lane alone (user → agent) resumes; two requests of one batch make one node', () => {
  const lane = open('user', 'scribe', 'default', [{ id: 'w1', name: 'file_write' }, { id: 'w2', name: 'file_write' }]);
  const nodes = resumableChains([request('apr-1', lane, 'w1', ['user', 'scribe']), request('apr-2', lane, 'w2', ['user', 'scribe'])], [lane], everyone);
  assert.deepEqual([...nodes.keys()], [lane.sessionId]);
  assert.equal(nodes.get(lane.sessionId)!.stage, 'approvals');
});
