import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { agentSchema } from '../../../src/collective/participant';
import { createBus } from '../../../src/events/bus';
import type { EventOf, LegionEvent } from '../../../src/events/types';
import type { Message, ToolUseBlock } from '../../../src/model/message';
import type { SessionHandle } from '../../../src/session/types';
import type { Tool, ToolCatalog } from '../../../src/tools/types';
import type { Verdict } from '../../../src/authz/types';
import type { ApprovalRequest } from '../../../src/authz/approvals';
import { runTurn, type TurnDeps } from '../../../src/runtime/agent-loop';
import { createPrescan } from '../../../src/runtime/prescan';
import { createExecutePhase } from '../../../src/runtime/execute-phase';
import { createResumePrepass } from '../../../src/runtime/resume-prepass';
import { createJournal } from '../../../src/runtime/journal';
import { SessionSlot, type Turn, type TurnStart } from '../../../src/runtime/turn';
import type { StreamResult } from '../../../src/runtime/stream';
import type { Batch } from '../../../src/runtime/call-state';
import { NO_SECRETS } from '../../../src/authz/scrub';
import { executeTool } from '../../../src/tools/execute-tool';

// One turn driven directly through runTurn(turn, start, deps): a stub stream (scripted model
// messages), a stub authorizer (a verdict per tool), the real pre-scan and execute phases,
// and a stub approval phase (a decision per tool). No composed app, no disk.

const tool = (name: string, run: (input: { text: string }) => Promise<string>): Tool<{ text: string }> => ({
  name,
  description: name,
  schema: z.object({ text: z.string() }),
  keyArgument: (input) => input.text,
  async execute(input) {
    return { content: await run(input) };
  },
});

const TOOLS: Tool[] = [
  tool('echo', async ({ text }) => `echo: ${text}`),
  tool('boom', async () => { throw new Error('kaput'); }),
  tool('wait', () => new Promise(() => undefined)),
];
const catalog: ToolCatalog = { get: (name) => TOOLS.find((t) => t.name === name), list: () => TOOLS };

const use = (id: string, name: string, input: unknown = { text: id }): ToolUseBlock => ({ type: 'tool_use', id, name, input });
const says = (text: string, toolUses: ToolUseBlock[] = [], inputErrors = new Map<string, string>()): StreamResult => ({ text, toolUses, inputErrors, aborted: false });

function memorySession(): SessionHandle {
  const messages: Message[] = [];
  return {
    id: 'session-user__worker__default',
    key: { initiatorId: 'user', responderId: 'worker', name: 'default' },
    messages: () => messages,
    append: (message) => void messages.push(message),
    lastActivity: () => messages.at(-1)?.at ?? '',
    contextRecords: () => [],
    appendContext: () => undefined,
  };
}

interface Setup {
  /** Model messages, in order; a function sees the turn (to cancel it mid-stream). */
  readonly script: (StreamResult | ((turn: Turn) => StreamResult))[];
  /** Verdict per tool name (default allow). */
  readonly verdicts?: Record<string, Verdict['decision']>;
  /** Decision per tool name for an `ask` (default approved). */
  readonly decisions?: Record<string, 'approved' | 'rejected'>;
  readonly start?: TurnStart;
  readonly session?: SessionHandle;
}

function setup(options: Setup) {
  const bus = createBus({ runId: 'run-1' });
  const events: LegionEvent[] = [];
  bus.subscribeAll((event) => void events.push(event));
  const journal = createJournal({ bus, scrub: NO_SECRETS, clock: () => new Date('2026-01-01T00:00:00Z') });
  const session = options.session ?? memorySession();
  const slot = new SessionSlot(session);
  const agent = agentSchema().parse({ id: 'worker', name: 'Worker', kind: 'agent', systemPrompt: 'work', tools: ['echo', 'boom', 'wait'] });
  const turn: Turn = {
    id: 1, slot, session, agent, chain: ['user', 'worker'], sessionChain: [session.id], controller: new AbortController(),
    delegations: new Set(), delivered: new Set(), wakers: new Set(), finished: false,
  };
  const authorized: string[] = [];
  const prescan = createPrescan({
    bus, tools: catalog, audit: () => undefined, notice: journal.notice,
    authorize: (call) => {
      authorized.push(call.toolName);
      const decision = options.verdicts?.[call.toolName] ?? 'allow';
      return { decision, ruleId: decision === 'allow' ? null : 'r1', reason: `${decision} by the stub`, source: 'rule' };
    },
  });
  const asked: string[] = [];
  const requests = new Map<string, ApprovalRequest>();
  const approvals = { withdraw: () => ({ ok: true }), get: (id: string) => (requests.has(id) ? { request: requests.get(id)! } : undefined) };
  const resume = createResumePrepass({ prescan, approvals: approvals as never, tools: catalog, abandon: () => undefined });
  const execute = createExecutePhase({
    workspaceRoot: '/ws', executeTool, isStopping: () => false, closingResumed: resume.closing,
    toolContext: (t, toolUseId) => ({
      workspaceRoot: '/ws', runId: 'run-1', sessionId: t.session.id, participantId: t.agent.id, chain: t.chain, toolUseId,
      signal: t.controller.signal, limits: { shellTimeoutMs: 1000, toolOutputLimit: 10_000 },
      askUser: async () => ({ content: 'no user in this test', isError: true }),
    }),
  });
  const script = [...options.script];
  const deps: TurnDeps = {
    maxIterations: 5,
    resolveProvider: () => ({ ok: true, provider: { id: 'stub', stream: () => { throw new Error('not called'); } }, model: 'm', maxTokens: 100 }),
    stream: async (t) => {
      const next = script.shift();
      assert.ok(next, 'the turn called the model more often than scripted');
      return typeof next === 'function' ? next(t) : next;
    },
    openBatch: prescan.open,
    prescan: prescan.scan,
    resumeCalls: resume.resumeCalls,
    decideAsks: async (t: Turn, batch: Batch) => {
      for (const call of batch.of('ask')) {
        asked.push(call.request ? `${call.use.name} (${call.request.requestId})` : call.use.name);
        if ((options.decisions?.[call.use.name] ?? 'approved') === 'approved') batch.set({ phase: 'run', use: call.use, tool: call.tool, input: call.input });
        else batch.end(call.use, { content: 'rejected by user', isError: true, failure: 'rejected' });
      }
    },
    runCalls: execute.runCalls,
    closeBatch: execute.close,
    append: journal.append,
    now: journal.now,
    setStatus: journal.setStatus,
    notice: journal.notice,
    collectNews: async () => [],
    isStopping: () => false,
    isLeftOpen: () => false,
  };
  return {
    events, session, turn, authorized, asked, requests,
    run: () => runTurn(turn, options.start ?? { kind: 'message', text: 'go' }, deps),
    ends: () => events.filter((e): e is EventOf<'tool-call-end'> => e.type === 'tool-call-end').map((e) => `${e.name}:${e.failure ?? 'ok'}`),
    statuses: () => events.filter((e): e is EventOf<'agent-status'> => e.type === 'agent-status').map((e) => e.status),
    results: () => session.messages().flatMap((m) => m.content.flatMap((b) => (b.type === 'tool_result' ? [`${b.toolUseId}:${b.isError ? 'error' : 'ok'}:${b.content}`] : []))),
  };
}

test('runTurn: a text answer ends the turn (user message, assistant message, thinking → idle)', async () => {
  const t = setup({ script: [says('hello')] });
  assert.deepEqual(await t.run(), { kind: 'done', text: 'hello' });
  assert.deepEqual(t.session.messages().map((m) => m.role), ['user', 'assistant']);
  assert.deepEqual(t.statuses(), ['thinking', 'idle']);
});

test('runTurn: allowed calls run, their results go back in one message, the model is called again', async () => {
  const t = setup({ script: [says('', [use('a', 'echo'), use('b', 'echo')]), says('done')] });
  assert.deepEqual(await t.run(), { kind: 'done', text: 'done' });
  assert.deepEqual(t.authorized, ['echo', 'echo']);
  assert.deepEqual(t.results(), ['a:ok:echo: a', 'b:ok:echo: b']);
  assert.deepEqual(t.ends(), ['echo:ok', 'echo:ok']);
  assert.deepEqual(t.session.messages().map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
  assert.deepEqual(t.statuses(), ['thinking', 'running-tool', 'thinking', 'idle']);
});

test('runTurn: every failure carries its kind in the result event — invalid input, denied, rejected, failed', async () => {
  const t = setup({
    verdicts: { echo: 'deny', wait: 'ask' },
    decisions: { wait: 'rejected' },
    script: [
      says('', [use('bad-json', 'echo'), use('bad-input', 'boom', { text: 3 }), use('denied', 'echo'), use('rejected', 'wait'), use('thrown', 'boom'), use('unknown', 'nope')],
        new Map([['bad-json', 'Unexpected end of JSON']])),
      says('ok'),
    ],
  });
  await t.run();
  assert.deepEqual(t.ends(), ['echo:invalid-input', 'boom:invalid-input', 'echo:denied', 'nope:denied', 'wait:rejected', 'boom:failed']);
  const results = t.results();
  assert.equal(results.length, 6, 'one result per call, in call order');
  assert.deepEqual(results.map((r) => r.split(':')[0]), ['bad-json', 'bad-input', 'denied', 'rejected', 'thrown', 'unknown']);
  assert.match(results[2]!, /denied by rule r1/);
  assert.match(results[4]!, /boom failed: kaput/);
  assert.deepEqual(t.asked, ['wait']);
  assert.deepEqual(t.authorized, ['echo', 'wait', 'boom'], 'only calls that pass the checks reach the authorizer');
});

test('runTurn: an approved ask runs; statuses go waiting-approval → running-tool', async () => {
  const t = setup({ verdicts: { echo: 'ask' }, script: [says('', [use('a', 'echo')]), says('fine')] });
  assert.deepEqual(await t.run(), { kind: 'done', text: 'fine' });
  assert.deepEqual(t.results(), ['a:ok:echo: a']);
  assert.deepEqual(t.statuses(), ['thinking', 'waiting-approval', 'running-tool', 'thinking', 'idle']);
});

test('runTurn: a cancel while a call runs answers it "interrupted" (kind interrupted) and ends the turn', async () => {
  const t = setup({
    script: [(turn) => {
      setTimeout(() => turn.controller.abort(), 10);
      return says('', [use('w', 'wait')]);
    }],
  });
  assert.deepEqual(await t.run(), { kind: 'interrupted' });
  assert.deepEqual(t.ends(), ['wait:interrupted']);
  assert.deepEqual(t.results(), ['w:error:interrupted by the user']);
  assert.equal(t.session.messages().at(-1)?.role, 'user', 'every call answered');
});

test('runTurn: a resume start goes through the same phases; a call with a request from before is not asked anew', async () => {
  const session = memorySession();
  const open: Message = { role: 'assistant', content: [use('a', 'echo'), use('b', 'echo')], at: '2026-01-01T00:00:00Z' };
  session.append({ role: 'user', content: [{ type: 'text', text: 'go' }], at: '2026-01-01T00:00:00Z' });
  session.append(open);
  const request = { requestId: 'req-1', toolUseId: 'a', ruleId: 'r1', reason: 'ask' } as ApprovalRequest;
  const t = setup({
    session,
    start: { kind: 'resume', point: { message: open, stage: 'approvals', requests: new Map([['a', request]]), children: new Map(), notes: ['[a note]'] } },
    script: [says('resumed')],
  });
  t.requests.set('req-1', request);
  assert.deepEqual(await t.run(), { kind: 'done', text: 'resumed' });
  assert.deepEqual(t.asked, ['echo (req-1)'], 'the earlier request is the ask; b was allowed by the rules');
  assert.deepEqual(t.results(), ['a:ok:echo: a', 'b:ok:echo: b']);
  const appended = session.messages()[2]!;
  assert.deepEqual(appended.content.at(-1), { type: 'text', text: '[a note]' }, 'the restart notes follow the results');
});
