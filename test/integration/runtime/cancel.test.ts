import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { join } from 'node:path';
import { z } from 'zod';
import type { Tool } from '../../../src/tools/types';
import type { LegionEvent } from '../../../src/events/types';
import { processGone, until } from '../../helpers/processes';
import { startAppHarness } from '../../helpers/app-harness';
import { assertAllValid, eventsOf, toolResults } from '../../helpers/runtime-assert';
import { withTempDir } from '../../helpers/tmp';

/**
 * Cancel at every phase of a turn: the session ends idle, every tool_use is answered
 * ("interrupted by the user"), and the next message works.
 */

const AFTER = `
  - { agent: worker, when: "after", text: "fresh start" }
`;

async function expectUsable(h: Awaited<ReturnType<typeof startAppHarness>>, sessionId: string): Promise<void> {
  assertAllValid(h.core);
  assert.equal(h.core.lastOutcome(sessionId)?.kind, 'interrupted');
  assert.equal(h.core.sessions().find((s) => s.id === sessionId)?.status, 'idle');
  const again = h.core.send('worker', 'after');
  assert.ok(again.ok);
  assert.equal(await h.core.idle(again.sessionId), 'fresh start');
  assertAllValid(h.core);
}

test('cancel while streaming: the stream stops, the partial text is kept, the session stays usable', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      agents: [{ id: 'worker', tools: ['file_write'] }],
      script: `
replies:
  - { agent: worker, when: "go", text: "a very long answer that streams slowly", chunkSize: 1, delayMs: 20, toolCalls: [{ name: file_write, input: { path: x.txt, content: x } }] }
${AFTER}`,
    });
    const sent = h.core.send('worker', 'go');
    assert.ok(sent.ok);
    await h.waitFor((e) => e.type === 'text-delta');
    h.core.cancel(sent.sessionId);
    await h.core.idle(sent.sessionId);
    const history = h.core.history(sent.sessionId);
    assert.equal(history[1]?.role, 'assistant');
    assert.ok(history[1]!.content[0]!.type === 'text' && history[1]!.content[0].text.length < 20, 'partial text kept');
    assert.equal(existsSync(`${dir}/x.txt`), false);
    await expectUsable(h, sent.sessionId);
    await h.close();
  });
});

test('cancel while waiting for approval: the request is withdrawn (cancel) and the call answered "interrupted by the user"', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      agents: [{ id: 'worker', tools: ['file_write'] }],
      rules: { file_write: 'ask' },
      script: `
replies:
  - { agent: worker, when: "go", toolCalls: [{ name: file_write, input: { path: x.txt, content: x } }] }
${AFTER}`,
    });
    const sent = h.core.send('worker', 'go');
    assert.ok(sent.ok);
    const request = await h.waitFor((e) => e.type === 'approval-request');
    assert.equal(h.core.pendingApprovals().length, 1);
    h.core.cancel(sent.sessionId);
    await h.core.idle(sent.sessionId);
    const resolved = eventsOf(h.events, 'approval-resolve');
    assert.equal(resolved.length, 1);
    assert.equal(resolved[0]!.requestId, request.type === 'approval-request' ? request.requestId : '');
    assert.equal(resolved[0]!.decidedBy, 'cancel');
    assert.deepEqual(h.core.pendingApprovals(), []);
    const [result] = toolResults(h.core.history(sent.sessionId));
    assert.deepEqual(result, { type: 'tool_result', toolUseId: result!.toolUseId, content: 'interrupted by the user', isError: true });
    assert.equal(existsSync(`${dir}/x.txt`), false);
    assert.deepEqual(h.core.resolveApprovals([resolved[0]!.requestId], 'approved').ok, false, 'a withdrawn request cannot be approved');
    await expectUsable(h, sent.sessionId);
    await h.close();
  });
});

test('cancel while a shell runs: every process of its group is gone (by pid), nothing runs after, the result says interrupted', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      // Outside the sandbox: the pids the shell writes are then the host's (in bubblewrap they
      // are its namespace's), so the test can check each process is gone.
      config: { sandbox: { mode: 'off' } },
      agents: [{ id: 'worker', tools: ['shell'] }],
      script: `
replies:
  - { agent: worker, when: "go", toolCalls: [{ name: shell, input: { command: "(sleep 30; touch late.txt) & echo $! > child.pid; echo $$ > shell.pid; wait" } }] }
${AFTER}
  - { agent: worker, on: tool-result, when: "^interrupted", toolCalls: [{ name: shell, input: { command: "touch next-call.txt" } }] }`,
    });
    const sent = h.core.send('worker', 'go');
    assert.ok(sent.ok);
    // A subshell with a background job is not plain words: no allow rule lifts it (docs/shell-rules.md), so the user approves it.
    const request = (await h.waitFor((e) => e.type === 'approval-request')) as Extract<LegionEvent, { type: 'approval-request' }>;
    assert.ok(h.core.resolveApprovals([request.requestId], 'approved').ok);
    const pidOf = (name: string): number => Number(readFileSync(join(dir, name), 'utf8').trim());
    await until(() => existsSync(join(dir, 'shell.pid')) && existsSync(join(dir, 'child.pid')) && pidOf('shell.pid') > 0 && pidOf('child.pid') > 0, 'the shell wrote its pids');
    const pids = [pidOf('shell.pid'), pidOf('child.pid')];
    assert.ok(pids.every((pid) => !processGone(pid)), 'the processes run before the cancel');
    h.core.cancel(sent.sessionId);
    await h.core.idle(sent.sessionId);
    const [result] = toolResults(h.core.history(sent.sessionId));
    assert.equal(result!.content, 'interrupted by the user');
    // The shell and its background child are killed, not just abandoned (a tool whose signal
    // never aborts would leave them running for 30 s: this wait would give up).
    await until(() => pids.every(processGone), `processes ${pids.join(', ')} are gone after the cancel`);
    // Nothing of the cancelled turn runs afterwards: no further tool call, no late file.
    assert.equal(eventsOf(h.events, 'tool-call-start').length, 1, 'no tool call after the cancel');
    assert.equal(existsSync(join(dir, 'next-call.txt')), false);
    assert.equal(existsSync(join(dir, 'late.txt')), false);
    await expectUsable(h, sent.sessionId);
    await h.close();
  });
});

test('cancel while a tool waits on an HTTP request: the request is aborted (the server sees the connection close)', { timeout: 30_000 }, async () => {
  const server = createServer(() => { /* never answers */ });
  const closed = new Promise<void>((resolve) => {
    server.on('request', (req: IncomingMessage) => req.socket.on('close', () => resolve()));
  });
  const arrived = once(server, 'request');
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`;
  const fetchTool: Tool<{ url: string }> = {
    name: 'slow_fetch',
    description: 'GET a URL',
    schema: z.object({ url: z.string() }),
    keyArgument: (input) => input.url,
    async execute(input, context) {
      const response = await fetch(input.url, { signal: context.signal });
      return { content: await response.text() };
    },
  };
  try {
    await withTempDir(async (dir) => {
      const h = await startAppHarness({
        dir,
        tools: [fetchTool],
        agents: [{ id: 'worker', tools: ['slow_fetch'] }],
        script: `
replies:
  - { agent: worker, when: "go", toolCalls: [{ name: slow_fetch, input: { url: "${url}" } }] }
${AFTER}`,
      });
      const sent = h.core.send('worker', 'go');
      assert.ok(sent.ok);
      await arrived;
      h.core.cancel(sent.sessionId);
      await h.core.idle(sent.sessionId);
      await closed; // a signal that never aborts would keep the request open: the test times out
      const [result] = toolResults(h.core.history(sent.sessionId));
      assert.equal(result!.content, 'interrupted by the user');
      await expectUsable(h, sent.sessionId);
      await h.close();
    });
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('cancel while waiting on a sub-agent: the sub-session is cancelled too; both histories stay valid', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      agents: [{ id: 'worker', tools: ['communicator'] }, { id: 'sub', tools: ['shell'] }],
      script: `
replies:
  - { agent: worker, when: "go", toolCalls: [{ name: communicator, input: { targetId: sub, message: "run it" } }] }
  - { agent: sub, toolCalls: [{ name: shell, input: { command: "sleep 30" } }] }
  - { agent: sub, on: tool-result, text: "should not happen" }
${AFTER}`,
    });
    const sent = h.core.send('worker', 'go');
    assert.ok(sent.ok);
    await h.waitFor((e) => e.type === 'agent-status' && e.participantId === 'sub' && e.status === 'running-tool');
    h.core.cancel(sent.sessionId);
    await h.core.idle(sent.sessionId);
    await h.core.idle('session-worker__sub__default');
    const [outer] = toolResults(h.core.history(sent.sessionId));
    assert.equal(outer!.content, 'interrupted by the user');
    const [inner] = toolResults(h.core.history('session-worker__sub__default'));
    assert.equal(inner!.content, 'interrupted by the user');
    assert.equal(h.core.sessions().find((s) => s.id === 'session-worker__sub__default')?.status, 'idle');
    await expectUsable(h, sent.sessionId);
    await h.close();
  });
});

test('cancel of a sub-session alone: its caller gets an error result and carries on', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      agents: [{ id: 'worker', tools: ['communicator'] }, { id: 'sub', tools: [] }],
      script: `
replies:
  - { agent: worker, when: "go", toolCalls: [{ name: communicator, input: { targetId: sub, message: "slow" } }] }
  - { agent: sub, text: "slowly slowly", chunkSize: 1, delayMs: 30 }
  - { agent: worker, on: tool-error, text: "sub was stopped: {{lastText}}" }
`,
    });
    const sent = h.core.send('worker', 'go');
    assert.ok(sent.ok);
    await h.waitFor((e) => e.type === 'text-delta' && e.participantId === 'sub');
    h.core.cancel('session-worker__sub__default');
    assert.equal(await h.core.idle(sent.sessionId), "sub was stopped: sub's turn was interrupted by the user");
    assert.equal(h.core.lastOutcome(sent.sessionId)?.kind, 'done');
    assertAllValid(h.core);
    await h.close();
  });
});

test('cancel of a queued message: it never runs', async () => {
  await withTempDir(async (dir) => {
    const h = await startAppHarness({
      dir,
      agents: [{ id: 'worker', tools: [] }],
      script: `
replies:
  - { agent: worker, when: "one", text: "first", chunkSize: 1, delayMs: 20 }
  - { agent: worker, when: "two", text: "second" }
`,
    });
    const a = h.core.send('worker', 'one');
    const b = h.core.send('worker', 'two');
    assert.ok(a.ok && b.ok && b.queued);
    await h.waitFor((e) => e.type === 'text-delta');
    h.core.cancel(a.sessionId);
    await h.core.idle(a.sessionId);
    const texts = h.core.history(a.sessionId).map((m) => (m.content[0]?.type === 'text' ? m.content[0].text : ''));
    assert.equal(texts.includes('two'), false);
    assertAllValid(h.core);
    await h.close();
  });
});
