import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { sessionIdOf } from '../../../src/session/ids';
import { layoutFor } from '../../../src/storage/layout';
import { createParticipantStore } from '../../../src/collective/store';
import { agentSchema } from '../../../src/collective/participant';
import { restateServerBinary } from '../../../src/engine/local-engine';
import { CUT_BY_WORKER } from '../../../src/engine/durable-steps';
import { until } from '../../helpers/processes';
import { killHard, runLegion, sendTurn, startWorker, repeatedFinished, withEngineRun, type EngineRunScene, type ModelRequest, type ModelScript, type WorkerProcess } from '../../helpers/engine-fixture';
import { requestText } from '../../../src/engine/http-text';

/**
 * A tool of the same batch as a delegation (docs/engine.md#delegation): `lead`
 * answers with a batch of a communicator call to `builder` (whose answer streams for seconds) and
 * two shell calls, `echo first` then its own slow `sh lead.sh` (a batch's shell calls run in order,
 * so the slow one's steps are issued after the call's). In-process both run at once; on the engine the tool must too, its
 * result in the turn before the delegation returns, and a worker killed mid-batch must replay the
 * lead's journal (with its `wake` steps) to the same path: nothing finished repeated.
 */
const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

const LEAD = 'You lead.';
const BUILD = 'You build.';
const S1 = sessionIdOf({ initiatorId: 'user', responderId: 'lead', name: 'default' });
const S2 = sessionIdOf({ initiatorId: 'lead', responderId: 'builder', name: 'default' });
const LEAD_TOOL_SECONDS = 2;
/** The builder's answer after its tool: 100 chunks 50 ms apart (5 s), longer than the lead's tool. */
const ANSWER_CHUNKS = 100;

/** The lead's tool: when it started and ended (ms since the epoch, the fake model's clock), one line each. */
const leadTool = `echo "$(date +%s%3N)" >> lead-starts.txt\nsleep ${LEAD_TOOL_SECONDS}\necho "$(date +%s%3N)" >> lead-ends.txt\necho lead-output\n`;

const script: ModelScript = ({ system, last, lastText }) => {
  if (!system.includes(LEAD)) return undefined; // the builder: `sh tool.sh`, then its long answer
  if (last === 'user') {
    return { calls: [
      { name: 'communicator', args: { targetId: 'builder', message: 'build it' } },
      // Shell calls of a batch run one after the other: the slow one's steps come after the call's.
      { name: 'shell', args: { command: 'echo first' } },
      { name: 'shell', args: { command: 'sh lead.sh' } },
    ] };
  }
  return { text: `lead heard: ${lastText.length}` };
};

type Scene = EngineRunScene;

/** `decides`: the lead holds resolve_approval and authority over shell, so its call takes mail (a mailbox call). */
async function withScene(body: (scene: Scene) => Promise<void>, decides = false): Promise<void> {
  await withEngineRun({ model: { answerChunks: ANSWER_CHUNKS, delayMs: 50, script }, toolSleepSeconds: 0, prepare: async (dir) => {
    await writeFile(join(dir, '.legion', 'rules.yaml'), 'version: 1\nrules:\n  - id: tool-script\n    decision: allow\n    tool: shell\n    match: { command: "sh tool.sh" }\n  - id: lead-script\n    decision: allow\n    tool: shell\n    match: { command: "sh lead.sh" }\n  - id: lead-first\n    decision: allow\n    tool: shell\n    match: { command: "echo first" }\n');
    await writeFile(join(dir, 'lead.sh'), leadTool);
    const store = createParticipantStore(layoutFor(dir));
    await store.save(agentSchema().parse({ id: 'lead', kind: 'agent', name: 'lead', systemPrompt: LEAD, tools: ['communicator', 'shell', ...(decides ? ['resolve_approval'] : [])], ...(decides ? { approvalAuthority: ['shell'] } : {}) }));
    await store.save(agentSchema().parse({ id: 'builder', kind: 'agent', name: 'builder', systemPrompt: BUILD, tools: ['shell'] }));
  } }, body);
}

const stamps = (file: string): number[] => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map(Number) : []);
const role = (r: ModelRequest): string => (r.system.includes(LEAD) ? 'lead' : 'builder');
const builderAnswer = (scene: Scene): ModelRequest | undefined => scene.model.requests.find((r) => role(r) === 'builder' && r.last === 'tool' && r.finished);
const leadLast = (scene: Scene): string => scene.model.requests.filter((r) => role(r) === 'lead' && r.last === 'tool').at(-1)?.history ?? '';

function roles(scene: Scene, sessionId: string): string[] {
  return readFileSync(layoutFor(scene.dir).sessionFile(scene.runId, sessionId), 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { role: string }).role);
}

/** The engine's journal entries named like `pattern` (its SQL introspection), of a session object (the lead's by default). */
async function journalNames(scene: Scene, pattern: string, sessionId = S1): Promise<string[]> {
  const sql = `SELECT j.name FROM sys_journal j JOIN sys_invocation i ON j.id = i.id WHERE i.target_service_key = '${sessionId}' AND j.name LIKE '${pattern}' ORDER BY j.index`;
  const { status, text: body } = await requestText(`${scene.engine.admin}/query`, { method: 'POST', headers: { accept: 'application/json' }, body: JSON.stringify({ query: sql }) });
  if (status !== 200) throw new Error(`query: ${status} ${body}`);
  return (JSON.parse(body) as { rows: { name: string }[] }).rows.map((r) => r.name);
}

const sendLead = (scene: Scene): Promise<unknown> =>
  sendTurn(scene.engine.ingress, S1, { runId: scene.runId, responderId: 'lead', name: 'default', text: 'start' }, 150_000);

/**
 * What every variant asserts once the lead's turn is over: each turn once, nothing finished asked
 * or run again. `killed`: the builder's tool may have been cut before it started (its start
 * journaled, the kill before the process ran: answered "interrupted", never run).
 */
function assertOnce(scene: Scene, result: { kind: string; text?: string }, logs: string, killed = false): void {
  assert.equal(result.kind, 'done', `${JSON.stringify(result)}\n${logs}`);
  assert.equal(repeatedFinished(scene.model), 0, `a finished model call was made again\n${logs}`);
  assert.equal(stamps(join(scene.dir, 'lead-starts.txt')).length, 1, `the lead's tool ran again\n${logs}`);
  const builderRuns = existsSync(join(scene.dir, 'starts.txt')) ? readFileSync(join(scene.dir, 'starts.txt'), 'utf8').trim().split('\n').length : 0;
  if (killed) assert.ok(builderRuns <= 1, 'the builder\'s tool ran again');
  else assert.equal(builderRuns, 1, 'the builder\'s tool did not run once');
  assert.deepEqual(roles(scene, S1), ['user', 'assistant', 'user', 'assistant']);
  assert.deepEqual(roles(scene, S2), ['user', 'assistant', 'user', 'assistant']);
  // The lead's last call saw the builder's whole answer.
  assert.match(leadLast(scene), /piece 99\./);
}

/**
 * `wakes`: how many wake steps the lead's turn may journal, one per command it issues while the
 * delegation is out (the first shell call's start may come before the call or after it).
 */
async function toolBesideDelegation(scene: Scene, wakes: { min: number; max: number }): Promise<void> {
  const worker = await startWorker(scene.dir, scene.env, scene.port);
  try {
    const result = await sendLead(scene) as { kind: string; text?: string };
    const logs = worker.log.join('');
    assertOnce(scene, result, logs);
    const [ended] = stamps(join(scene.dir, 'lead-ends.txt'));
    const answer = builderAnswer(scene);
    assert.ok(ended !== undefined && answer, logs);
    // In-process order: the lead's tool (2 s) ended while the builder was still streaming its
    // answer (5 s, after its own model call and tool), not after the delegation came back.
    assert.ok(ended < answer.writtenAt.at(-1)!, `the lead's tool ended at ${ended}, after the builder's last chunk (${answer.writtenAt.at(-1)})`);
    assert.match(leadLast(scene), /lead-output/);
    // What the window cost: a wake step after each command of the lead while the call was out;
    // none in the builder's turn (no delegation of its own).
    const names = await journalNames(scene, 'wake %');
    assert.ok(names.length >= wakes.min && names.length <= wakes.max, JSON.stringify(names));
    assert.deepEqual(names, names.map((_, i) => `wake ${i + 1}`));
    assert.deepEqual(await journalNames(scene, 'wake %', S2), []);
  } finally {
    await killHard(worker.child);
  }
}

test('a batch of a delegation and a slow tool: the tool runs while the delegate works, its result in before the delegation returns', { skip, timeout: 180_000 }, async () => {
  // After the call, and `tool-start` and `tool` of each shell call issued after it (the slow one's at least).
  await withScene((scene) => toolBesideDelegation(scene, { min: 3, max: 5 }));
});

test('the same batch from a caller that takes mail meanwhile (it decides approvals): the tool runs while the delegate works', { skip, timeout: 180_000 }, async () => {
  // The same, and after its mailbox's `take`.
  await withScene((scene) => toolBesideDelegation(scene, { min: 4, max: 6 }), true);
});

/** Kill the worker at `when`, start another: the lead's turn ends done on it (the lead's journal holds wake steps by then). */
async function killedDuringBatch(scene: Scene, when: () => Promise<void>): Promise<{ result: { kind: string; text?: string }; logs: string }> {
  const first = await startWorker(scene.dir, scene.env, scene.port);
  const outcome = sendLead(scene);
  outcome.catch(() => undefined);
  let second: WorkerProcess | undefined;
  try {
    await when();
    // The journal being replayed holds the steps that let the tool in beside the call.
    assert.ok((await journalNames(scene, 'wake %')).length >= 1, 'no wake step in the lead\'s journal');
    await killHard(first.child);
    second = await startWorker(scene.dir, scene.env, scene.port);
    const result = await outcome as { kind: string; text?: string };
    return { result, logs: `${first.log.join('')}\n${second.log.join('')}\n${JSON.stringify(scene.model.requests.map((r) => [role(r), r.last, r.finished]))}` };
  } finally {
    await killHard(first.child);
    if (second) await killHard(second.child);
  }
}

test('the worker killed during the batch while the lead\'s tool runs: the tool answered "interrupted", not run again; the delegation finishes once', { skip, timeout: 240_000 }, async () => {
  await withScene(async (scene) => {
    const { result, logs } = await killedDuringBatch(scene, () => until(() => stamps(join(scene.dir, 'lead-starts.txt')).length === 1, 'the lead\'s tool started', 90_000));
    assertOnce(scene, result, logs, true);
    assert.ok(leadLast(scene).includes(CUT_BY_WORKER.slice(0, 40)), leadLast(scene));
  });
});

test('the worker killed during the batch while the delegate streams (the lead\'s tool done): the replay takes the same path, nothing finished repeated', { skip, timeout: 240_000 }, async () => {
  await withScene(async (scene) => {
    const { result, logs } = await killedDuringBatch(scene, async () => {
      await until(() => stamps(join(scene.dir, 'lead-ends.txt')).length === 1, 'the lead\'s tool ended', 90_000);
      await scene.model.streaming((r) => role(r) === 'builder' && r.last === 'tool', 45);
    });
    assertOnce(scene, result, logs, true);
    // The tool's result was journaled before the kill: replayed, not cut.
    assert.match(leadLast(scene), /lead-output/);
    assert.ok(!leadLast(scene).includes(CUT_BY_WORKER.slice(0, 40)), leadLast(scene));
  });
});

test('legion run: the slow tool of the batch asks the user (decided by --approve all): decided once, it runs once beside the delegation, the turn ends', { skip, timeout: 180_000 }, async () => {
  await withScene(async (scene) => {
    const rules = join(scene.dir, '.legion', 'rules.yaml');
    await writeFile(rules, readFileSync(rules, 'utf8').replace('id: lead-script\n    decision: allow', 'id: lead-script\n    decision: ask'));
    const worker = await startWorker(scene.dir, scene.env, scene.port);
    try {
      const run = await runLegion(scene.dir, scene.env, ['run', '--to', 'lead', '--json', '--approve', 'all', 'start']);
      assert.equal(run.code, 0, `${run.stderr}\n${worker.log.join('')}`);
      const events = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; sessionId?: string; requestId?: string; decision?: string });
      const asked = events.filter((e) => e.type === 'approval-request');
      assert.equal(asked.length, 1, JSON.stringify(asked));
      assert.equal(asked[0]!.sessionId, S1);
      assert.deepEqual(events.filter((e) => e.type === 'approval-resolve').map((e) => [e.requestId, e.decision]), [[asked[0]!.requestId, 'approved']]);
      assert.equal(stamps(join(scene.dir, 'lead-starts.txt')).length, 1, 'the approved tool did not run once');
      // A batch's requests are decided before its calls run: the tool still runs beside the delegation.
      const [ended] = stamps(join(scene.dir, 'lead-ends.txt'));
      assert.ok(ended !== undefined && ended < builderAnswer(scene)!.writtenAt.at(-1)!, `the lead's tool ended at ${ended}, after the builder's last chunk`);
      assert.equal(repeatedFinished(scene.model), 0);
      assert.deepEqual(roles(scene, S2), ['user', 'assistant', 'user', 'assistant']);
      assert.match(leadLast(scene), /lead-output/);
      assert.match(leadLast(scene), /piece 99\./);
    } finally {
      await killHard(worker.child);
    }
  });
});
