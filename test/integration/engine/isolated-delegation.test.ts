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
import { restateServerBinary, freePort } from '../../../src/engine/local-engine';
import { CUT_BY_WORKER } from '../../../src/engine/durable-steps';
import { ISOLATION_MARK } from '../../../src/model/isolation';
import { withTempDir } from '../../helpers/tmp';
import { makeRepo } from '../../unit/worktrees/helpers';
import { killHard, runLegion, setupEngineWorkspace, startEngine, startFakeModel, startWorker, type ModelScript, type WorkerProcess } from '../../helpers/engine-fixture';

/**
 * A delegation to a target in worktree isolation on the engine (docs/engine.md#delegation,
 * docs/worktrees.md): the caller's core prepares the worktree (a step of its invocation), the
 * target's turn is an invocation of its own whose tools act in the worktree, and its merge request
 * at the turn's end reaches the user (`legion run --approve all` decides it). A worker killed
 * while the isolated builder's tool runs: the chain ends on a new worker, the tool is not run
 * again, no finished model call is made again, and the work is merged into the workspace once.
 */
const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

const LEAD = 'You lead.';
const S1 = sessionIdOf({ initiatorId: 'user', responderId: 'lead', name: 'default' });
const S2 = sessionIdOf({ initiatorId: 'lead', responderId: 'builder', name: 'default' });

const lines = (file: string): number => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).length : 0);

/** The lead delegates to the builder and answers with what it heard; the builder runs `sh tool.sh`, then 60 pieces of text. */
const script: ModelScript = ({ system, last, lastText }) => {
  if (!system.includes(LEAD)) return undefined;
  if (last === 'user') return { call: { name: 'communicator', args: { targetId: 'builder', message: 'build it' } } };
  return { text: `lead heard: ${lastText}` };
};

test('a chain lead → builder in worktree isolation, the worker killed while the builder\'s tool runs: its own invocation, not run again, merged once', { skip, timeout: 240_000 }, async () => {
  await withTempDir(async (dir) => {
    const model = await startFakeModel({ answerChunks: 60, delayMs: 20, script });
    const engine = await startEngine(dir);
    let first: WorkerProcess | undefined;
    let second: WorkerProcess | undefined;
    try {
      const env = { ...(await setupEngineWorkspace(dir, model.url, engine, 4)), LEGION_ENGINE_TIMING: '1' };
      const store = createParticipantStore(layoutFor(dir));
      await store.save(agentSchema().parse({ id: 'lead', kind: 'agent', name: 'lead', systemPrompt: LEAD, tools: ['communicator'] }));
      await store.save(agentSchema().parse({ id: 'builder', kind: 'agent', name: 'builder', systemPrompt: 'You build.', tools: ['shell'], isolation: 'worktree' }));
      // The engine writes its data and log in this folder while the repository is made: git must
      // not walk them (`git add -A` raced restate-server's files) nor merge them back.
      await makeRepo(dir, { '.gitignore': '.legion/\nbuild/\nengine-data/\nengine.log\n', 'shared.txt': 'one\ntwo\nthree\n', 'README.md': '# demo\n' });
      const run = await createRunStore(layoutFor(dir), () => new Date(), randomIds).create(new Date());
      const port = await freePort();
      first = await startWorker(dir, env, port);
      const hub = runLegion(dir, env, ['run', '--run', run.id, '--to', 'lead', '--json', '--approve', 'all', 'start']);
      // The tool runs in the builder's worktree: kill the worker while it sleeps there.
      const worktreeStarts = join(dir, '.legion', 'worktrees', S2, 'starts.txt');
      const deadline = Date.now() + 120_000;
      while (lines(worktreeStarts) === 0) {
        assert.ok(Date.now() < deadline, `the builder's tool never started in its worktree:\n${first.log.join('')}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(lines(join(dir, 'starts.txt')), 0, 'the isolated tool ran in the workspace');
      await killHard(first.child);
      second = await startWorker(dir, env, port);
      const done = await Promise.race([
        hub,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no outcome in 150 s\n${second!.log.join('')}`)), 150_000).unref()),
      ]);
      const logs = `${first.log.join('')}\n${second.log.join('')}\n${done.stderr}`;
      assert.equal(done.code, 0, logs);
      const events = done.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; sessionId?: string; toolName?: string; requestId?: string; approverId?: string; decision?: string });
      // The merge request of the builder's own turn reached the user and was approved.
      const merge = events.find((e) => e.type === 'approval-request' && e.toolName === 'merge');
      assert.equal(merge?.sessionId, S2, JSON.stringify(events.filter((e) => e.type.startsWith('approval'))));
      assert.equal(merge?.approverId, 'user');
      assert.ok(events.some((e) => e.type === 'approval-resolve' && e.requestId === merge!.requestId && e.decision === 'approved'));
      // The tool ran once (answered interrupted on the replay), its work merged into the workspace once.
      assert.equal(lines(worktreeStarts), 1, 'the tool ran again');
      assert.equal(lines(join(dir, 'starts.txt')), 1, `the builder's work was not merged once:\n${logs}`);
      const builder = readFileSync(layoutFor(dir).sessionFile(run.id, S2), 'utf8');
      assert.ok(builder.includes(CUT_BY_WORKER), builder);
      assert.ok((JSON.parse(builder.split('\n')[0]!) as { content: { text: string }[] }).content[0]!.text.startsWith(ISOLATION_MARK), 'the builder was not told where it works');
      // No finished model call made again.
      const finished = model.requests.filter((r) => r.finished).map((r) => r.history);
      assert.equal(finished.length - new Set(finished).size, 0, 'a finished model call was made again');
      // The builder's turn was an invocation of its own (its line on the second worker; the first died before its line).
      const turnLines = [first, second].flatMap((w) => w.log.join('').split('\n')).filter((l) => l.includes(`turn ${S2}:`));
      assert.equal(turnLines.length, 1, `the builder's turn did not run as its own invocation:\n${logs}`);
      const lead = readFileSync(layoutFor(dir).sessionFile(run.id, S1), 'utf8');
      assert.match(lead, /merged into the workspace/);
    } finally {
      if (first) await killHard(first.child);
      if (second) await killHard(second.child);
      try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
      await model.close();
    }
  });
});
