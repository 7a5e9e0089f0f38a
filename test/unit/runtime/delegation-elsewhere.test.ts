import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runsElsewhere } from '../../../src/runtime/delegation';
import type { CollectiveRegistry } from '../../../src/collective/registry';
import type { Participant } from '../../../src/collective/participant';

/** A registry of agents by id: `tools` and `approvalAuthority` as given. */
function registry(agents: Record<string, { tools: string[]; approvalAuthority: '*' | string[] }>): CollectiveRegistry {
  return { get: (id: string) => (id === 'user' ? { id, kind: 'user' } : agents[id] ? { id, kind: 'agent', status: 'active', ...agents[id] } : undefined) as Participant | undefined } as unknown as CollectiveRegistry;
}

test('a delegation runs in another invocation unless a caller on the chain can decide approvals or it re-attaches (an isolated target too runs elsewhere)', () => {
  const plain = registry({ lead: { tools: ['communicator'], approvalAuthority: [] }, mid: { tools: ['communicator'], approvalAuthority: ['shell'] } });
  assert.equal(runsElsewhere(plain, ['user', 'lead', 'mid'], false), true, 'authority without resolve_approval decides nothing');
  assert.equal(runsElsewhere(plain, ['user', 'lead'], true), false);
  const approver = registry({ lead: { tools: ['communicator', 'resolve_approval'], approvalAuthority: ['shell'] }, mid: { tools: ['communicator'], approvalAuthority: [] } });
  assert.equal(runsElsewhere(approver, ['user', 'lead', 'mid'], false), false, 'a request below could be for lead, whose turn waits in this core');
  assert.equal(runsElsewhere(approver, ['user', 'mid'], false), true);
  const noAuthority = registry({ lead: { tools: ['communicator', 'resolve_approval'], approvalAuthority: [] } });
  assert.equal(runsElsewhere(noAuthority, ['user', 'lead'], false), true);
});
