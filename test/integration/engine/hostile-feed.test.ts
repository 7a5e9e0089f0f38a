import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { EventFeed } from '../../../src/engine/event-feed';
import { startAppHarness } from '../../helpers/app-harness';
import { startFeedWorker, workspaceToken } from '../../helpers/fake-worker-feed';
import { withTempDir } from '../../helpers/tmp';
import { until } from '../../helpers/processes';

/**
 * A hostile worker feed (docs/engine.md#the-feed-checked-and-the-buss-stamp): whoever registers a
 * deployment with the engine's admin API points the hub at a feed it writes. The hub — the
 * composed core of `legion serve` with engine.kind restate — takes only lines in a shape a worker
 * writes: a usage event that would lower the run's spend, a request for the user without its
 * fields, the hub's own `run-end`, an awakeable with ids that are not strings, a line with two
 * bodies, an event that is not an object, one whose `__proto__` key would lend it fields: none
 * reaches the bus, the run's usage, the pending requests or the ledger; the lines after them are
 * taken as before.
 */
const SESSION = 'session-user__builder__default';

test('a hostile worker feed: malformed lines never reach the hub\'s bus, usage, requests or ledger; good lines after them do', { timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const worker = await startFeedWorker(new EventFeed(5), workspaceToken(dir));
    const logs: string[] = [];
    const hub = await startAppHarness({
      dir, agents: [{ id: 'builder', tools: ['shell'] }], config: { engine: { kind: 'restate', ingress: worker.admin, admin: worker.admin } },
      log: (line: string) => void logs.push(line),
    });
    try {
      await until(() => worker.streams.length > 0, 'the hub follows the worker', 20_000, 10);
      const runId = hub.runId;
      const write = (line: unknown): void => void worker.streams[0]!.write((typeof line === 'string' ? line : JSON.stringify(line)) + '\n');
      const usage = { sessionId: SESSION, participantId: 'builder', model: 'm', inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 };
      const request = { requestId: 'apr-evil', sessionId: SESSION, participantId: 'builder', toolUseId: 'call-1', toolName: 'shell', input: { command: 'rm -rf /' }, ruleId: null, approverId: 'user' };

      write({ runId, event: { type: 'usage', ...usage, costUsd: -1_000_000 } }); // would hide the run's spend from its budget
      write({ runId, event: { type: 'usage', ...usage, inputTokens: -5, costUsd: 0 } });
      write({ runId, event: { type: 'approval-request', ...request } }); // no chain
      write({ runId, event: { type: 'run-end', reason: 'the worker says the run is over' } });
      write({ runId, event: { type: 'no-such-event' } });
      write({ runId, event: null });
      write({ runId, awakeable: { requestId: { toString: 1 }, id: 'awk_1' } });
      write({ runId, event: { type: 'text-delta', sessionId: SESSION, participantId: 'builder', text: 'two bodies' }, awakeable: { requestId: 'apr-evil', id: 'awk_2' } });
      write('{"runId":' + JSON.stringify(runId) + ',"event":{"type":"tool-call-end","sessionId":"' + SESSION + '","participantId":"builder","toolUseId":"t1","name":"shell","summary":"ok","__proto__":{"isError":true}}}');
      write('not json at all');
      write({ runId: 'another-run', event: { type: 'usage', costUsd: -5 } }); // not this hub's: passed over
      // Then good lines: taken as before.
      write({ runId, event: { type: 'usage', ...usage, costUsd: 0.25 } });
      write({ runId, event: { type: 'text-delta', sessionId: SESSION, participantId: 'builder', text: 'still streaming' } });

      await hub.waitFor((e) => e.type === 'text-delta' && e.text === 'still streaming', 20_000);
      const fromFeed = hub.events.filter((e) => e.type === 'usage' || e.type === 'approval-request' || e.type === 'text-delta' || e.type === 'tool-call-end' || (e.type === 'run-end' && e.reason.includes('worker')));
      assert.deepEqual(fromFeed.map((e) => e.type === 'usage' ? `usage ${e.costUsd}` : e.type === 'text-delta' ? `delta ${e.text}` : e.type), ['usage 0.25', 'delta still streaming'], 'only the good lines reached the bus');
      assert.equal(hub.core.usage().run.costUsd, 0.25, 'the run\'s spend counts the good usage only');
      assert.equal(hub.core.usage().run.inputTokens, 10);
      assert.deepEqual(hub.core.pendingApprovals().map((r) => r.requestId), [], 'no request offered from a malformed line');
      const refusals = logs.filter((l) => l.includes('refused'));
      assert.ok(refusals.length >= 5 && refusals.length <= 10, `each refusal said, at most 10 (${refusals.length}): ${refusals.join(' | ')}`);
      assert.ok(refusals.some((l) => l.includes('run-end')), 'the hub\'s own event refused');
      assert.ok(!logs.some((l) => l.includes('another-run')), 'a line of another run is passed over');

      await hub.close();
      const ledger = hub.layout.events(runId);
      const lines = existsSync(ledger) ? readFileSync(ledger, 'utf8') : '';
      assert.ok(!lines.includes('rm -rf') && !lines.includes('-1000000') && !lines.includes('isError":true'), 'nothing of the malformed lines in the ledger');
      assert.ok(lines.includes('still streaming'), 'the good delta is in the ledger');
    } finally {
      await hub.close().catch(() => undefined);
      await worker.close();
    }
  });
});
