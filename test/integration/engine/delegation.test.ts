import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { sessionIdOf } from '../../../src/session/ids';
import { layoutFor } from '../../../src/storage/layout';
import { createParticipantStore } from '../../../src/collective/store';
import { agentSchema } from '../../../src/collective/participant';
import { restateServerBinary } from '../../../src/engine/local-engine';
import { CUT_BY_WORKER } from '../../../src/engine/durable-steps';
import { attachRemote, type RemoteCore } from '../../../src/serve/remote-core';
import { until } from '../../helpers/processes';
import { killHard, runLegion, sendTurn, spawnLegion, startWorker, repeatedFinished, withEngineRun, type EngineRunScene, type ModelScript, type WorkerProcess } from '../../helpers/engine-fixture';
import { writtenJsonLines } from '../../helpers/jsonl';

/**
 * Delegation on the engine (docs/engine.md#delegation): `lead` delegates to `builder` through
 * the communicator; the builder's turn is a call to its own session object, an invocation of its
 * own with its own journal. A worker killed with SIGKILL mid-chain: the chain finishes on a new
 * worker, no finished model call is made again, no tool runs twice, the builder's session holds
 * its turn once, and the lead's answer carries the builder's.
 */
const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

const LEAD = 'You lead.';
const BUILD = 'You build.';
const S1 = sessionIdOf({ initiatorId: 'user', responderId: 'lead', name: 'default' });
const S2 = sessionIdOf({ initiatorId: 'lead', responderId: 'builder', name: 'default' });
const S3 = sessionIdOf({ initiatorId: 'builder', responderId: 'lead', name: 'default' });

const lines = (file: string): number => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).length : 0);

/** The lead delegates to the builder; an agent whose call came back answers with what it heard. */
const leadScript = (builderDelegatesBack: boolean): ModelScript => ({ system, last, lastText }) => {
  const lead = system.includes(LEAD);
  if (last === 'user' && lead) return { call: { name: 'communicator', args: { targetId: 'builder', message: 'build it' } } };
  if (last === 'user' && builderDelegatesBack) return { call: { name: 'communicator', args: { targetId: 'lead', message: 'ask back' } } };
  if (last === 'tool' && (lead || builderDelegatesBack)) return { text: `${lead ? 'lead' : 'builder'} heard: ${lastText}` };
  return undefined; // the builder: `sh tool.sh`, then 60 pieces of text
};

type Scene = EngineRunScene;

async function withScene(toolSleep: number, script: ModelScript, body: (scene: Scene) => Promise<void>): Promise<void> {
  await withEngineRun({ model: { answerChunks: 60, delayMs: 50, script }, toolSleepSeconds: toolSleep, prepare: async (dir) => {
    const store = createParticipantStore(layoutFor(dir));
    await store.save(agentSchema().parse({ id: 'lead', kind: 'agent', name: 'lead', systemPrompt: LEAD, tools: ['communicator'] }));
    await store.save(agentSchema().parse({ id: 'builder', kind: 'agent', name: 'builder', systemPrompt: BUILD, tools: ['shell', 'communicator'] }));
  } }, (scene) => body({ ...scene, env: { ...scene.env, LEGION_ENGINE_TIMING: '1' } }));
}

function roles(scene: Scene, sessionId: string): string[] {
  const file = layoutFor(scene.dir).sessionFile(scene.runId, sessionId);
  return readFileSync(file, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { role: string }).role);
}

/** The turns the workers ran as invocations of their own (LEGION_ENGINE_TIMING's line per turn). */
const turnsRun = (workers: WorkerProcess[], sessionId: string): number =>
  workers.flatMap((w) => w.log.join('').split('\n')).filter((l) => l.includes(`turn ${sessionId}:`)).length;

const sendLead = (scene: Scene): Promise<unknown> =>
  sendTurn(scene.engine.ingress, S1, { runId: scene.runId, responderId: 'lead', name: 'default', text: 'start' });

test('a chain lead → builder, the worker killed while the builder\'s model streams: finished on a new worker, nothing finished repeated', { skip, timeout: 180_000 }, async () => {
  await withScene(0, leadScript(false), async (scene) => {
    const first = await startWorker(scene.dir, scene.env, scene.port);
    const outcome = sendLead(scene);
    // The builder's answer after its tool is streaming: kill the worker in the middle of it.
    await scene.model.streaming((r) => r.system.includes(BUILD) && r.last === 'tool', 10);
    await killHard(first.child);
    let second: WorkerProcess | undefined;
    try {
      second = await startWorker(scene.dir, scene.env, scene.port);
      const result = await outcome as { kind: string; text?: string };
      assert.equal(result.kind, 'done', JSON.stringify(result));
      assert.match(result.text ?? '', /^lead heard: piece 0\. .*piece 59\. $/s, 'the lead\'s answer carries the builder\'s');
      assert.equal(repeatedFinished(scene.model), 0, 'a finished model call was made again');
      const calls = scene.model.requests.map((r) => [r.system.includes(LEAD) ? 'lead' : 'builder', r.last, r.finished]);
      assert.deepEqual(calls, [['lead', 'user', true], ['builder', 'user', true], ['builder', 'tool', false], ['builder', 'tool', true], ['lead', 'tool', true]]);
      assert.equal(lines(join(scene.dir, 'starts.txt')), 1, 'the tool ran again');
      // Each session holds its turn once (a replay of the lead does not run the builder's turn again).
      assert.deepEqual(roles(scene, S2), ['user', 'assistant', 'user', 'assistant']);
      assert.deepEqual(roles(scene, S1), ['user', 'assistant', 'user', 'assistant']);
      // The builder's turn was an invocation of its own (replayed on the second worker; the first died before its line).
      assert.equal(turnsRun([first, second], S2), 1, `the builder's turn did not run as its own invocation:\n${first.log.join('')}\n${second.log.join('')}`);
    } finally {
      if (second) await killHard(second.child);
    }
  });
});

test('a chain lead → builder, the worker killed while the builder\'s tool runs: answered "interrupted", not run again; the chain ends', { skip, timeout: 180_000 }, async () => {
  await withScene(4, leadScript(false), async (scene) => {
    const first = await startWorker(scene.dir, scene.env, scene.port);
    const outcome = sendLead(scene);
    const starts = join(scene.dir, 'starts.txt');
    const deadline = Date.now() + 90_000;
    while (lines(starts) === 0) {
      assert.ok(Date.now() < deadline, `the tool never started: ${first.log.join('')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    await killHard(first.child);
    let second: WorkerProcess | undefined;
    try {
      second = await startWorker(scene.dir, scene.env, scene.port);
      const result = await outcome as { kind: string; text?: string };
      assert.equal(result.kind, 'done', JSON.stringify(result));
      assert.match(result.text ?? '', /^lead heard: piece 0\. .*piece 59\. $/s);
      assert.equal(lines(starts), 1, 'the tool ran again');
      assert.equal(repeatedFinished(scene.model), 0, 'a finished model call was made again');
      const calls = scene.model.requests.map((r) => [r.system.includes(LEAD) ? 'lead' : 'builder', r.last, r.finished]);
      assert.deepEqual(calls, [['lead', 'user', true], ['builder', 'user', true], ['builder', 'tool', true], ['lead', 'tool', true]]);
      assert.deepEqual(roles(scene, S2), ['user', 'assistant', 'user', 'assistant']);
      const builder = readFileSync(layoutFor(scene.dir).sessionFile(scene.runId, S2), 'utf8');
      assert.ok(builder.includes(CUT_BY_WORKER), builder);
    } finally {
      if (second) await killHard(second.child);
    }
  });
});

test('a delegation back to a session already on the chain is refused as in-process, not a deadlock of the session objects', { skip, timeout: 180_000 }, async () => {
  await withScene(0, leadScript(true), async (scene) => {
    const worker = await startWorker(scene.dir, scene.env, scene.port);
    try {
      // lead (S1) → builder (S2) → lead (S3) → builder in S2: S2's object is busy with the turn that waits on this call.
      const result = await Promise.race([
        sendLead(scene),
        new Promise((_, reject) => setTimeout(() => reject(new Error(`deadlock: no answer in 120 s\n${worker.log.join('')}`)), 120_000).unref()),
      ]) as { kind: string; text?: string };
      assert.equal(result.kind, 'done', JSON.stringify(result));
      // The in-process communicator's refusal (src/runtime/delegation.ts), climbing back up as each agent's answer.
      const refusal = `refused: ${S2} is already waiting on this call chain (${S1} → ${S2} → ${S3}); a message there would wait on itself.`;
      assert.ok(result.text?.startsWith('lead heard: builder heard: lead heard: '), result.text);
      assert.ok(result.text?.includes(refusal), result.text);
      // Three turns, each an invocation of its own.
      for (const id of [S1, S2, S3]) assert.equal(turnsRun([worker], id), 1, `${id}:\n${worker.log.join('')}`);
    } finally {
      await killHard(worker.child);
    }
  });
});

test('cancelling the caller in a front end cancels the delegate\'s invocation: both turns end interrupted, no model call after, the tool cut', { skip, timeout: 180_000 }, async () => {
  await withScene(30, leadScript(false), async (scene) => {
    const worker = await startWorker(scene.dir, scene.env, scene.port);
    const serve = spawnLegion(scene.dir, scene.env, ['serve']);
    let log = '';
    serve.stderr!.on('data', (d: Buffer) => { log += d.toString(); });
    let remote: RemoteCore | undefined;
    try {
      await until(() => log.includes('serving run'), 'legion serve listening', 90_000);
      const info = JSON.parse(readFileSync(join(scene.dir, '.legion', 'serve.json'), 'utf8')) as { socket: string };
      remote = (await attachRemote({ socket: info.socket, client: 'test' })).core;
      const sent = remote.send('lead', 'start');
      assert.ok(sent.ok);
      await until(() => lines(join(scene.dir, 'starts.txt')) === 1, 'the builder\'s tool started', 90_000, 20);
      remote.cancel(sent.sessionId);
      // The tool sleeps 30 s: the cancel ends the chain well before.
      await until(() => remote!.sessions().find((s) => s.id === sent.sessionId)?.status === 'idle', 'the lead idle after the cancel', 20_000, 20);
      const runId = readdirSync(join(scene.dir, '.legion', 'runs')).find((r) => existsSync(layoutFor(scene.dir).sessionFile(r, S2)))!;
      // Polled while the worker appends: whole lines only.
      const rolesOf = (id: string): string[] => writtenJsonLines<{ role: string }>(layoutFor(scene.dir).sessionFile(runId, id)).map((m) => m.role);
      await until(() => rolesOf(S2).length >= 3, 'the builder\'s call answered', 20_000, 20);
      // Valid histories, each call answered, no answer after the cancel.
      assert.deepEqual(rolesOf(S2), ['user', 'assistant', 'user']);
      assert.match(readFileSync(layoutFor(scene.dir).sessionFile(runId, S2), 'utf8'), /interrupted/);
      await until(() => rolesOf(S1).length >= 3, 'the lead\'s call answered', 20_000, 20);
      assert.deepEqual(rolesOf(S1), ['user', 'assistant', 'user']);
      await new Promise((r) => setTimeout(r, 1000));
      assert.deepEqual(scene.model.requests.map((r) => [r.system.includes(LEAD) ? 'lead' : 'builder', r.last]), [['lead', 'user'], ['builder', 'user']], 'a model call after the cancel');
      assert.equal(lines(join(scene.dir, 'ends.txt')), 0, 'the tool ran to its end');
    } finally {
      await remote?.shutdown('test over');
      await killHard(serve);
      await killHard(worker.child);
    }
  });
});

test('a batch of the lead running a tool and two delegations in parallel, the worker killed while a builder streams: the chain ends, nothing finished repeated', { skip, timeout: 180_000 }, async () => {
  const script: ModelScript = ({ system, last, lastText }) => {
    if (!system.includes(LEAD)) return undefined;
    if (last === 'user') {
      return { calls: [
        { name: 'shell', args: { command: 'sh tool.sh' } },
        { name: 'communicator', args: { targetId: 'builder', message: 'part a', sessionName: 'a' } },
        { name: 'communicator', args: { targetId: 'builder', message: 'part b', sessionName: 'b' } },
      ] };
    }
    return { text: `lead heard: ${lastText}` };
  };
  await withScene(0, script, async (scene) => {
    await createParticipantStore(layoutFor(scene.dir)).save(agentSchema().parse({ id: 'lead', kind: 'agent', name: 'lead', systemPrompt: LEAD, tools: ['communicator', 'shell'] }));
    const first = await startWorker(scene.dir, scene.env, scene.port);
    const outcome = sendLead(scene);
    await scene.model.streaming((r) => r.system.includes(BUILD) && r.last === 'tool', 10);
    await killHard(first.child);
    let second: WorkerProcess | undefined;
    try {
      second = await startWorker(scene.dir, scene.env, scene.port);
      const result = await Promise.race([
        outcome,
        new Promise((_, reject) => setTimeout(() => reject(new Error(`no outcome in 120 s\n${second!.log.join('')}`)), 120_000).unref()),
      ]) as { kind: string; text?: string };
      assert.equal(result.kind, 'done', JSON.stringify(result));
      assert.equal(repeatedFinished(scene.model), 0, 'a finished model call was made again');
      // Three tool runs: the lead's and each builder's, none again.
      assert.equal(lines(join(scene.dir, 'starts.txt')), 3, `a tool ran again: ${JSON.stringify(scene.model.requests.map((r) => [r.system.includes(LEAD) ? 'lead' : 'builder', r.last, r.finished, r.history.slice(0, 300)]))}\n${first.log.join('')}\n${second.log.join('')}`);
      for (const name of ['a', 'b']) {
        assert.deepEqual(roles(scene, sessionIdOf({ initiatorId: 'lead', responderId: 'builder', name })), ['user', 'assistant', 'user', 'assistant']);
      }
      // The lead's last call saw both builders' answers (and its own tool's output).
      const leadLast = scene.model.requests.filter((r) => r.system.includes(LEAD) && r.last === 'tool').at(-1)!.history;
      assert.equal((leadLast.match(/piece 59\./g) ?? []).length, 2, leadLast);
      assert.match(leadLast, /tool-output/);
      assert.match(result.text ?? '', /^lead heard: /);
    } finally {
      if (second) await killHard(second.child);
    }
  });
});

test('legion run: the builder\'s approval, raised in its own invocation, reaches the user (decided by --approve all); its deltas reach the front end live', { skip, timeout: 180_000 }, async () => {
  await withScene(0, leadScript(false), async (scene) => {
    // The builder's `sh tool.sh` asks (the rule's decision), and no agent on the chain can decide: the user is asked.
    await writeFile(join(scene.dir, '.legion', 'rules.yaml'), 'version: 1\nrules:\n  - id: tool-script\n    decision: ask\n    tool: shell\n    match: { command: "sh tool.sh" }\n');
    const worker = await startWorker(scene.dir, scene.env, scene.port);
    try {
      const run = await runLegion(scene.dir, scene.env, ['run', '--to', 'lead', '--json', '--approve', 'all', 'start']);
      assert.equal(run.code, 0, run.stderr);
      const events = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; sessionId?: string; text?: string; approverId?: string; decidedBy?: string; message?: { role: string } });
      const request = events.find((e) => e.type === 'approval-request');
      assert.equal(request?.sessionId, S2, JSON.stringify(request));
      assert.equal(request?.approverId, 'user');
      const resolved = events.filter((e) => e.type === 'approval-resolve') as { requestId?: string; decision?: string }[];
      assert.ok(resolved.some((e) => e.requestId === (request as { requestId?: string }).requestId && e.decision === 'approved'), JSON.stringify(resolved));
      assert.equal(lines(join(scene.dir, 'starts.txt')), 1, 'the approved tool did not run once');
      // The builder's deltas were forwarded as they came, before the lead's answer.
      const deltas = events.map((e, i) => [e, i] as const).filter(([e]) => e.type === 'text-delta' && e.sessionId === S2);
      assert.equal(deltas.map(([e]) => e.text).join(''), Array.from({ length: 60 }, (_, i) => `piece ${i}. `).join(''));
      const leadAnswer = events.findIndex((e) => e.type === 'text-delta' && e.sessionId === S1);
      assert.ok(leadAnswer > deltas.at(-1)![1], 'the builder\'s deltas came after the lead\'s answer');
      assert.equal(turnsRun([worker], S2), 1, `the builder's turn was not its own invocation:\n${worker.log.join('')}`);
    } finally {
      await killHard(worker.child);
    }
  });
});
