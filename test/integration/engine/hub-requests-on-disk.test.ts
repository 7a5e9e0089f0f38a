import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { EventFeed } from '../../../src/engine/event-feed';
import type { LegionEvent } from '../../../src/events/types';
import { startAppHarness } from '../../helpers/app-harness';
import { startFeedWorker, workspaceToken } from '../../helpers/fake-worker-feed';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';

/**
 * A hub (`legion serve` with engine.kind restate) started again on a run whose `approvals.jsonl`
 * holds requests its workers raised (docs/engine.md#approvals): it offers a request only as a
 * worker's feed holds it — once, not also as a copy of its own read from disk — and a request
 * decided on the worker is gone from it. Before, the restarted hub loaded the file into its own
 * queue: every request pending at its start was listed twice while waiting and stayed listed
 * after it was decided (a decision on that copy reached no worker), and one whose worker no
 * longer held it was offered for ever.
 */
const SESSION = 'session-user__builder__default';

test('a restarted hub offers the workers\' requests from their feeds only: once each, none from approvals.jsonl, gone once decided', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const feed = new EventFeed(5);
    const worker = await startFeedWorker(feed, workspaceToken(dir));
    const options = { dir, agents: [{ id: 'builder', tools: ['shell'] }], config: { engine: { kind: 'restate', ingress: worker.admin, admin: worker.admin } } };
    try {
      const first = await startAppHarness(options);
      const runId = first.runId;
      const file = first.layout.approvals(runId);
      await first.close();

      // What the workers wrote while no hub ran: apr-1 waits on the live worker, apr-2's worker is gone.
      const at = new Date().toISOString();
      const request = (requestId: string) => ({
        requestId, sessionId: SESSION, participantId: 'builder', chain: ['user', 'builder'], toolUseId: `call-${requestId}`,
        toolName: 'shell', input: { command: 'sh tool.sh' }, ruleId: 'tool-script', reason: 'ask', approverId: 'user',
      });
      const line = (requestId: string): string => JSON.stringify({ kind: 'request', version: 1, ...request(requestId), at }) + '\n';
      appendFileSync(file, line('apr-1') + line('apr-2'));
      const event = (body: Record<string, unknown>): LegionEvent => ({ ...body, seq: 1, at, runId }) as unknown as LegionEvent;
      feed.publish(event({ type: 'approval-request', ...request('apr-1') }));
      feed.publishAwakeable(runId, 'apr-1', 'awk_1');

      const hub = await startAppHarness(options);
      try {
        assert.equal(hub.runId, runId);
        await until(() => hub.core.pendingApprovals().some((r) => r.requestId === 'apr-1'), 'the worker\'s request offered', 20_000, 10);
        await new Promise((r) => setTimeout(r, 200));
        assert.deepEqual(hub.core.pendingApprovals().map((r) => r.requestId), ['apr-1'], 'offered once, and nothing read from disk');
        assert.equal(hub.core.resolveApprovals(['apr-2'], 'approved').ok, false, 'a request no worker holds was decided');

        // Decided on the worker (its queue writes the resolve; its feed says so): gone from the hub.
        appendFileSync(file, JSON.stringify({ kind: 'resolve', version: 1, requestId: 'apr-1', decision: 'approved', decidedBy: 'user', reason: 'ok', at }) + '\n');
        feed.publish(event({ type: 'approval-resolve', requestId: 'apr-1', decision: 'approved', decidedBy: 'user', reason: 'ok' }));
        await until(() => hub.core.pendingApprovals().length === 0, 'the decided request gone', 20_000, 10);
      } finally {
        await hub.close();
      }
    } finally {
      await worker.close();
    }
  });
});
