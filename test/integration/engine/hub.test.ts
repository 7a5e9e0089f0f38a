import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { restateServerBinary, freePort } from '../../../src/engine/local-engine';
import { withTempDir } from '../../helpers/tmp';
import { processGone, until } from '../../helpers/processes';
import { REPO_ROOT } from '../../helpers/bundle';
import { killHard, setupEngineWorkspace, startEngine, startFakeModel, startWorker } from '../../helpers/engine-fixture';

const skip = restateServerBinary().ok ? false : 'restate-server is not installed for this platform';

function legion(dir: string, env: Record<string, string>, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'bin', 'legion.ts'), '--cwd', dir, ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('engine.kind restate: legion run sends the turn to the engine; the worker runs it, its deltas reach the front end live, the projection is on disk', { skip, timeout: 120_000 }, async () => {
  await withTempDir(async (dir) => {
    const model = await startFakeModel({ answerChunks: 5, delayMs: 10 });
    const engine = await startEngine(dir);
    try {
      const env = await setupEngineWorkspace(dir, model.url, engine);
      const worker = await startWorker(dir, env, await freePort());
      try {
        const run = await legion(dir, env, ['run', '--to', 'builder', '--json', 'build it']);
        assert.equal(run.code, 0, run.stderr);
        const events = run.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; text?: string; message?: { role: string }; participantId?: string; status?: string; detail?: string });
        // The worker's events, forwarded: the tool ran there, the answer streamed from there.
        assert.ok(events.some((e) => e.type === 'tool-call-end'), 'no tool-call-end forwarded');
        assert.equal(events.filter((e) => e.type === 'text-delta').map((e) => e.text).join(''), 'piece 0. piece 1. piece 2. piece 3. piece 4. ');
        assert.equal(events.filter((e) => e.type === 'message-add').length, 4);
        // The builder's statuses as in-process, each once: the hub's `thinking` when it sent the turn
        // and the worker's at its start, the worker's `idle` at the end and the hub's, were shown twice.
        const statuses = events.filter((e) => e.type === 'agent-status' && e.participantId === 'builder').map((e) => `${e.status}${e.detail ? ` ${e.detail}` : ''}`);
        assert.deepEqual(statuses, ['thinking', 'running-tool shell', 'thinking', 'idle']);
        assert.equal(readFileSync(join(dir, 'starts.txt'), 'utf8'), 'started\n');
        // The hub wrote no session file itself: exactly one copy of each message on disk.
        const runsDir = join(dir, '.legion', 'runs');
        const sessionFile = (id: string): string => join(runsDir, id, 'sessions', 'session-user__builder__default.jsonl');
        const found = readdirSync(runsDir).filter((d) => existsSync(sessionFile(d)));
        assert.equal(found.length, 1);
        const lines = readFileSync(sessionFile(found[0]!), 'utf8').trim().split('\n');
        assert.equal(lines.length, 4);
        // Usage counted once, by the hub (two model calls of 10 + 5 tokens), not again by the worker.
        const usage = JSON.parse(readFileSync(join(runsDir, found[0]!, 'usage.json'), 'utf8')) as { run: { calls: number; inputTokens: number; outputTokens: number } };
        assert.deepEqual([usage.run.calls, usage.run.inputTokens, usage.run.outputTokens], [2, 20, 10]);
      } finally {
        await killHard(worker.child);
      }
    } finally {
      try { process.kill(-engine.pid, 'SIGKILL'); } catch { /* gone */ }
      await model.close();
    }
  });
});

test('engine.kind restate with the engine down: legion run says in one line what to run', { skip, timeout: 60_000 }, async () => {
  await withTempDir(async (dir) => {
    const model = await startFakeModel({ answerChunks: 1, delayMs: 0 });
    const engine = await startEngine(dir);
    process.kill(-engine.pid, 'SIGKILL');
    await until(() => processGone(engine.pid), 'the engine gone (its ports closed)', 15_000);
    try {
      const env = await setupEngineWorkspace(dir, model.url, engine);
      const run = await legion(dir, env, ['run', '--to', 'builder', 'build it']);
      assert.equal(run.code, 1);
      assert.equal(run.stderr, `legion: the engine at ${engine.ingress} does not answer: start it with legion engine up, or set engine.kind: in-process\n`);
    } finally {
      await model.close();
    }
  });
});
