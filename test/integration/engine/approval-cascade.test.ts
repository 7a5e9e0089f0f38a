import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRunStore } from '../../../src/session/run-store';
import { randomIds, sessionIdOf } from '../../../src/session/ids';
import { layoutFor } from '../../../src/storage/layout';
import { createParticipantStore } from '../../../src/collective/store';
import { agentSchema } from '../../../src/collective/participant';
import { restateServerBinary, freePort, type LocalEngine } from '../../../src/engine/local-engine';
import { withTempDir } from '../../helpers/tmp';
import { killHard, runLegion, sendTurn, setupEngineWorkspace, startEngine, startFakeModel, startWorker, type FakeModel, type ModelRequest, type ModelScript, type WorkerProcess } from '../../helpers/engine-fixture';
import { writtenJsonLines } from '../../helpers/jsonl';
import { requestText } from '../../../src/engine/http-text';

/**
 * The approval cascade across session objects (docs/engine.md#approvals-across-objects): `lead`
 * (holding resolve_approval and authority over shell) delegates to `builder`, whose `sh tool.sh`
 * asks. The builder's turn is an invocation of its own; its request goes to the lead as
 * in-process — the lead's communicator call returns early listing it — and the lead's
 * resolve_approval decides it, the decision reaching the builder's invocation through the
 * engine. A worker killed with SIGKILL while the request is pending: the chain ends on a new
 * worker, the request decided by the lead, the builder's turn finished, nothing finished repeated.
 */
const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

const LEAD = 'You lead.';
const BUILD = 'You build.';
const S1 = sessionIdOf({ initiatorId: 'user', responderId: 'lead', name: 'default' });
const S2 = sessionIdOf({ initiatorId: 'lead', responderId: 'builder', name: 'default' });

const lines = (file: string): number => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).length : 0);

/** The lead delegates, decides what its call lists, and answers with the builder's reply; the builder runs `sh tool.sh`, then 60 pieces. */
const script: ModelScript = ({ system, last, lastText }) => {
  if (!system.includes(LEAD)) return undefined;
  const asked = /Approval requests waiting for your decision:[\s\S]*?(apr-[A-Za-z0-9_-]+)/.exec(lastText);
  if (asked) return { call: { name: 'resolve_approval', args: { requestId: asked[1], decision: 'approved', reason: 'fine' } } };
  if (lastText.includes('piece 59.')) return { text: `lead heard: ${lastText.includes('[reply from builder') ? 'reply' : 'answer'} with piece 59` };
  if (last === 'user') return { call: { name: 'communicator', args: { targetId: 'builder', message: 'build it' } } };
  return undefined;
};

interface Scene { dir: string; env: Record<string, string>; engine: LocalEngine; model: FakeModel; runId: string; port: number }

async function withScene(body: (scene: Scene) => Promise<void>, leadScript: ModelScript = script): Promise<void> {
  await withTempDir(async (dir) => {
    const model = await startFakeModel({ answerChunks: 60, delayMs: 30, script: leadScript });
    const engine = await startEngine(dir);
    try {
      const env = await setupEngineWorkspace(dir, model.url, engine, 0, 'ask');
      const store = createParticipantStore(layoutFor(dir));
      await store.save(agentSchema().parse({ id: 'lead', kind: 'agent', name: 'lead', systemPrompt: LEAD, tools: ['communicator', 'resolve_approval'], approvalAuthority: ['shell'] }));
      await store.save(agentSchema().parse({ id: 'builder', kind: 'agent', name: 'builder', systemPrompt: BUILD, tools: ['shell'] }));
      const run = await createRunStore(layoutFor(dir), () => new Date(), randomIds).create(new Date());
      await body({ dir, env: { ...env, LEGION_ENGINE_TIMING: '1' }, engine, model, runId: run.id, port: await freePort() });
    } finally {
      try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
      await model.close();
    }
  });
}

interface ApprovalLine { kind: string; requestId: string; approverId?: string; decision?: string; decidedBy?: string; sessionId?: string }
const approvalLines = (scene: Scene): ApprovalLine[] => {
  const file = layoutFor(scene.dir).approvals(scene.runId);
  return writtenJsonLines<ApprovalLine>(file); // polled while the worker appends
};

/** What the engine holds (its invocations and journals) and the approval lines: said when a chain hangs. */
async function journals(scene: Scene): Promise<string> {
  const query = async (sql: string): Promise<string> => {
    return (await requestText(`${scene.engine.admin}/query`, { method: 'POST', headers: { accept: 'application/json' }, body: JSON.stringify({ query: sql }) })).text;
  };
  return [
    await query('SELECT target, status, id FROM sys_invocation'),
    await query('SELECT id, index, entry_type, name FROM sys_journal ORDER BY id, index'),
    ...approvalLines(scene).map((l) => JSON.stringify(l)),
  ].join('\n');
}

const role = (r: ModelRequest): string => (r.system.includes(LEAD) ? 'lead' : 'builder');

/** The chain after the kill: asserted the same whatever the kill cut. */
async function finishesOnASecondWorker(scene: Scene, first: WorkerProcess, outcome: Promise<unknown>): Promise<void> {
  await killHard(first.child);
  const second = await startWorker(scene.dir, scene.env, scene.port);
  try {
    const logs = (): string => `${first.log.join('')}\n${second.log.join('')}\n${JSON.stringify(scene.model.requests.map((r) => [role(r), r.last, r.finished]))}`;
    const result = await Promise.race([
      outcome,
      new Promise((_, reject) => setTimeout(() => void journals(scene).then((dump) => reject(new Error(`no outcome in 120 s\n${logs()}\n${dump}`))), 120_000).unref()),
    ]) as { kind: string; text?: string };
    assert.equal(result.kind, 'done', `${JSON.stringify(result)}\n${logs()}`);
    assert.match(result.text ?? '', /^lead heard: (reply|answer) with piece 59$/, 'the lead\'s answer carries the builder\'s');
    // Decided by the lead's agent (not the user, not a cancel), once for the live request.
    const lines_ = approvalLines(scene);
    const asked = lines_.filter((l) => l.kind === 'request' && l.sessionId === S2);
    assert.ok(asked.length >= 1 && asked.every((l) => l.approverId === 'lead'), JSON.stringify(lines_));
    const approved = lines_.filter((l) => l.kind === 'resolve' && l.decision === 'approved');
    assert.equal(approved.length, 1, JSON.stringify(lines_));
    assert.equal(approved[0]!.decidedBy, 'agent:lead');
    assert.ok(!lines_.some((l) => l.kind === 'reassign'), `the request climbed past the lead: ${JSON.stringify(lines_)}`);
    // The tool ran once, after the decision; no finished model call made again.
    assert.equal(lines(join(scene.dir, 'starts.txt')), 1, `the approved tool did not run once\n${logs()}`);
    const finished = scene.model.requests.filter((r) => r.finished).map((r) => r.history);
    assert.equal(finished.length - new Set(finished).size, 0, `a finished model call was made again\n${logs()}`);
    // The builder's session holds its turn once; its turn was an invocation of its own (its
    // timing line: on the second worker, or on the first when it had ended before the kill).
    const roles = readFileSync(layoutFor(scene.dir).sessionFile(scene.runId, S2), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { role: string }).role);
    assert.deepEqual(roles, ['user', 'assistant', 'user', 'assistant']);
    const turns = [first, second].flatMap((w) => w.log.join('').split('\n')).filter((l) => l.includes(`turn ${S2}:`));
    assert.equal(turns.length, 1, `the builder's turn did not run as its own invocation\n${logs()}`);
  } finally {
    await killHard(second.child);
  }
}

test('lead → builder, the builder\'s request decided by the lead\'s agent; the worker killed while it is pending, before the lead hears of it', { skip, timeout: 240_000 }, async () => {
  await withScene(async (scene) => {
    const first = await startWorker(scene.dir, scene.env, scene.port);
    const outcome = sendTurn(scene.engine.ingress, S1, { runId: scene.runId, responderId: 'lead', name: 'default', text: 'start' });
    outcome.catch(() => undefined);
    const deadline = Date.now() + 90_000;
    while (!approvalLines(scene).some((l) => l.kind === 'request' && l.approverId === 'lead')) {
      assert.ok(Date.now() < deadline, `no request for the lead: ${first.log.join('')}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    await finishesOnASecondWorker(scene, first, outcome);
  });
});

test('lead → builder, the worker killed while the lead\'s model answers the request with resolve_approval: decided once on the new worker', { skip, timeout: 240_000 }, async () => {
  await withScene(async (scene) => {
    const first = await startWorker(scene.dir, scene.env, scene.port);
    const outcome = sendTurn(scene.engine.ingress, S1, { runId: scene.runId, responderId: 'lead', name: 'default', text: 'start' });
    outcome.catch(() => undefined);
    await scene.model.streaming((r) => role(r) === 'lead' && r.last === 'tool' && r.history.includes('Approval requests waiting'), 1);
    await finishesOnASecondWorker(scene, first, outcome);
  });
});

test('lead → builder, the lead ends its turn leaving the request undecided: it climbs to the user from the builder\'s own core (legion run --approve all decides it through the hub)', { skip, timeout: 240_000 }, async () => {
  // The lead hears of the request and answers without deciding; its reply to the builder's answer is its last word.
  const leaves: ModelScript = ({ system, last, lastText }) => {
    if (!system.includes(LEAD)) return undefined;
    if (lastText.includes('piece 59.')) return { text: 'lead heard: piece 59' };
    if (lastText.includes('Approval requests waiting for your decision')) return { text: 'not mine to decide' };
    if (last === 'user' && !lastText.includes('[reply from')) return { call: { name: 'communicator', args: { targetId: 'builder', message: 'build it' } } };
    return undefined;
  };
  await withScene(async (scene) => {
    const worker = await startWorker(scene.dir, scene.env, scene.port);
    try {
      const run = await runLegion(scene.dir, scene.env, ['run', '--run', scene.runId, '--to', 'lead', '--json', '--approve', 'all', 'start']);
      const logs = `${worker.log.join('')}\n${run.stderr}\n${await journals(scene)}`;
      assert.equal(run.code, 0, logs);
      const lines_ = approvalLines(scene);
      const request = lines_.find((l) => l.kind === 'request' && l.sessionId === S2);
      assert.equal(request?.approverId, 'lead', logs);
      // Left undecided by the lead's turn, it climbed (the builder's core reassigned it) to the user, who approved it.
      assert.ok(lines_.some((l) => l.kind === 'reassign' && l.requestId === request!.requestId && l.approverId === 'user'), logs);
      const resolved = lines_.filter((l) => l.kind === 'resolve' && l.requestId === request!.requestId);
      assert.deepEqual(resolved.map((l) => [l.decision, l.decidedBy]), [['approved', 'user']], logs);
      assert.equal(lines(join(scene.dir, 'starts.txt')), 1, logs);
      assert.match(run.stdout, /lead heard: piece 59/);
      const turns = worker.log.join('').split('\n').filter((l) => l.includes(`turn ${S2}:`));
      assert.equal(turns.length, 1, `the builder's turn did not run as its own invocation\n${logs}`);
    } finally {
      await killHard(worker.child);
    }
  }, leaves);
});

test('ur → lead → builder, only ur decides: the builder\'s request skips the lead and reaches ur\'s call two invocations up, decided there', { skip, timeout: 240_000 }, async () => {
  const UR = 'You are ur.';
  const S0 = sessionIdOf({ initiatorId: 'user', responderId: 'ur', name: 'default' });
  const chain: ModelScript = ({ system, last, lastText }) => {
    if (system.includes(UR)) {
      const asked = /Approval requests waiting for your decision:[\s\S]*?(apr-[A-Za-z0-9_-]+)/.exec(lastText);
      if (asked) return { call: { name: 'resolve_approval', args: { requestId: asked[1], decision: 'approved' } } };
      if (lastText.includes('lead heard')) return { text: 'ur heard: the lead' };
      if (last === 'user') return { call: { name: 'communicator', args: { targetId: 'lead', message: 'lead it' } } };
      return undefined;
    }
    if (system.includes(LEAD)) {
      if (last === 'user') return { call: { name: 'communicator', args: { targetId: 'builder', message: 'build it' } } };
      return { text: `lead heard: ${lastText.includes('piece 59.') ? 'piece 59' : lastText.slice(0, 80)}` };
    }
    return undefined;
  };
  await withScene(async (scene) => {
    const store = createParticipantStore(layoutFor(scene.dir));
    await store.save(agentSchema().parse({ id: 'ur', kind: 'agent', name: 'ur', systemPrompt: UR, tools: ['communicator', 'resolve_approval'], approvalAuthority: '*' }));
    await store.save(agentSchema().parse({ id: 'lead', kind: 'agent', name: 'lead', systemPrompt: LEAD, tools: ['communicator'] }));
    const worker = await startWorker(scene.dir, scene.env, scene.port);
    try {
      const result = await Promise.race([
        sendTurn(scene.engine.ingress, S0, { runId: scene.runId, responderId: 'ur', name: 'default', text: 'start' }),
        new Promise((_, reject) => setTimeout(() => void journals(scene).then((dump) => reject(new Error(`no outcome in 120 s\n${worker.log.join('')}\n${dump}`))), 120_000).unref()),
      ]) as { kind: string; text?: string };
      const logs = `${worker.log.join('')}\n${JSON.stringify(result)}\n${await journals(scene)}`;
      assert.equal(result.kind, 'done', logs);
      assert.equal(result.text, 'ur heard: the lead', logs);
      const lines_ = approvalLines(scene);
      const request = lines_.find((l) => l.kind === 'request' && l.sessionId === S2);
      assert.equal(request?.approverId, 'ur', logs);
      assert.deepEqual(lines_.filter((l) => l.kind !== 'request').map((l) => [l.kind, l.decision, l.decidedBy]), [['resolve', 'approved', 'agent:ur']], logs);
      assert.equal(lines(join(scene.dir, 'starts.txt')), 1, logs);
      // The lead's answer carried the builder's; each turn an invocation of its own.
      const leadSession = sessionIdOf({ initiatorId: 'ur', responderId: 'lead', name: 'default' });
      assert.match(readFileSync(layoutFor(scene.dir).sessionFile(scene.runId, leadSession), 'utf8'), /lead heard: piece 59/);
      for (const id of [S0, leadSession, S2]) {
        assert.equal(worker.log.join('').split('\n').filter((l) => l.includes(`turn ${id}:`)).length, 1, `${id}\n${logs}`);
      }
    } finally {
      await killHard(worker.child);
    }
  }, chain);
});
