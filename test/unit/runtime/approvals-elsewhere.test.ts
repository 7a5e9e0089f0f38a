import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCommands, type CommandDeps } from '../../../src/runtime/commands';
import type { ApprovalsElsewhere } from '../../../src/runtime/ports';
import type { PendingApproval } from '../../../src/model/approval';

/**
 * Engine mode's hub passes the requests waiting on its workers to the core as a typed part
 * (`CoreOptions.elsewhere`) instead of patching the core's methods: the core lists them with its
 * own and sends a decision on one to where it waits, after deciding its own (an own id it
 * refuses stops the whole call, as before).
 */
const pending = (requestId: string): PendingApproval => ({
  requestId, sessionId: 's', participantId: 'a', chain: ['user', 'a'], toolUseId: `t-${requestId}`, toolName: 'shell', input: {}, ruleId: 'r', reason: 'x', approverId: 'user', at: 'now',
});

function core(own: string[]) {
  const resolved: string[][] = [];
  const decided: string[] = [];
  const approvals = {
    get: () => undefined,
    pending: () => own.map((requestId) => ({ ...pending(requestId) })),
    resolve: (ids: readonly string[]) => {
      const unknown = ids.find((id) => !own.includes(id));
      if (unknown) return { ok: false as const, error: `no pending request ${unknown}` };
      resolved.push([...ids]);
      return { ok: true as const };
    },
  };
  const elsewhere: ApprovalsElsewhere = {
    pending: () => [pending('w-1')],
    holds: (id) => id === 'w-1',
    decide: (id, decision) => void decided.push(`${id} ${decision}`),
  };
  const deps = { approvals, elsewhere, journal: { notice: () => undefined }, run: {} } as unknown as CommandDeps;
  return { commands: createCommands(deps), resolved, decided };
}

test("the core lists the requests waiting elsewhere after its own and decides each where it waits", () => {
  const { commands, resolved, decided } = core(['apr-1']);
  assert.deepEqual(commands.pendingApprovals().map((p) => p.requestId), ['apr-1', 'w-1']);
  assert.deepEqual(commands.resolveApprovals(['apr-1', 'w-1'], 'approved'), { ok: true });
  assert.deepEqual(resolved, [['apr-1']]);
  assert.deepEqual(decided, ['w-1 approved']);
  assert.deepEqual(commands.resolveApprovals(['w-1'], 'rejected'), { ok: true });
  assert.deepEqual(resolved, [['apr-1']], 'nothing of its own to decide');
  assert.deepEqual(decided, ['w-1 approved', 'w-1 rejected']);
});

test('an own id the queue refuses stops the call: nothing is sent elsewhere', () => {
  const { commands, decided } = core(['apr-1']);
  const result = commands.resolveApprovals(['apr-9', 'w-1'], 'approved');
  assert.equal(result.ok, false);
  assert.deepEqual(decided, []);
});
