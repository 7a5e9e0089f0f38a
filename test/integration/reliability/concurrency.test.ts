import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { composeApp } from '../../../src/cli/compose';
import type { LegionEvent } from '../../../src/events/types';
import { layoutFor } from '../../../src/storage/layout';
import { createParticipantStore } from '../../../src/collective/store';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';
import {
  APP_DIR, appContext, buildCrashDriver, listFiles, readJsonlLines, setupCrashWorkspace, startDriver,
} from '../../helpers/crash-workspace';
import { TRUSTED } from '../../../src/storage/workspace-trust';

/**
 * Concurrency (issue 9): one Legion drives a run at a time (the run lock), others may read it;
 * a lock left by a SIGKILLed Legion is taken over; one process with 20 agents working in
 * parallel sessions writes whole lines only (every line of every file parses, counts match).
 */
test('two processes, one run: the second `legion run` is refused with one clear line, `legion show` reads, --new works; after a SIGKILL the lock is taken over', { timeout: 120_000 }, async () => {
  const driver = await buildCrashDriver();
  try {
    await withTempDir(async (dir) => {
      await setupCrashWorkspace(dir);
      const env = { HOME: dir, LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, '.legion', 'crash-script.yaml') };
      const child = startDriver(driver, dir, 3);
      const runId = await child.ready;
      assert.ok(runId, child.stderr());
      try {
        const lockFile = layoutFor(dir).runLock(runId);
        const before = await readFile(lockFile, 'utf8');

        const refused = await runCli(['run', '--to', 'w2', 'hello'], { cwd: dir, env, appDir: APP_DIR });
        assert.equal(refused.code, 1);
        assert.equal(refused.stdout, '');
        assert.match(refused.stderr, new RegExp(`^legion: run ${runId} is in use by another Legion \\(pid ${child.child.pid}, since \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC\\): open it read-only with \`legion show\`, or start a new run with --new\\n$`));
        const explicit = await runCli(['run', '--run', runId, 'hello'], { cwd: dir, env, appDir: APP_DIR });
        assert.equal(explicit.code, 1);
        assert.match(explicit.stderr, /is in use by another Legion/);
        assert.equal(await readFile(lockFile, 'utf8'), before, 'the refused process left the lock alone');

        const firstSession = layoutFor(dir).sessionFile(runId, 'session-user__w1__default');
        for (let i = 0; i < 100 && !existsSync(firstSession); i++) await new Promise((r) => setTimeout(r, 50));
        const show = await runCli(['show'], { cwd: dir, env, appDir: APP_DIR });
        assert.equal(show.code, 0, show.stderr);
        assert.match(show.stdout, new RegExp(`^run ${runId} · created `));
        assert.match(show.stdout, /session-user__w1__default +user → w1 +default +\d+/);
        assert.doesNotMatch(show.stderr, /in use|error/i);
        const runs = await runCli(['runs'], { cwd: dir, env, appDir: APP_DIR });
        assert.equal(runs.code, 0);
        assert.match(runs.stdout, new RegExp(runId));

        const fresh = await runCli(['run', '--new', '--to', 'w2', 'hello'], { cwd: dir, env, appDir: APP_DIR });
        assert.equal(fresh.code, 0, fresh.stderr);
        assert.match(fresh.stdout, /Some calls failed; summing up what I have\.\n$/);
        assert.equal(await readFile(lockFile, 'utf8'), before, 'the other run did not touch this lock');
      } finally {
        child.child.kill('SIGKILL');
        await child.exited;
      }

      // The holder died without releasing: the next start takes the lock over and says so.
      const resumed = await runCli(['run', '--run', runId, '--to', 'w3', 'after the crash'], { cwd: dir, env, appDir: APP_DIR });
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stderr, new RegExp(`^legion: warning: took over the lock of run ${runId} from pid ${child.child.pid}, which is gone\\n`, 'm'));
      assert.equal(await readFile(layoutFor(dir).runLock(runId), 'utf8').catch(() => 'gone'), 'gone', 'released at exit');
    });
  } finally {
    await rm(driver, { force: true });
  }
});

const N = 20;

const SCRIPT = `version: 1
defaults: { chunkSize: 3, delayMs: 1 }
replies:
  - agent: resource-agent
    text: "Spawning ${N} agents."
    toolCalls:
${Array.from({ length: N }, (_, i) => `      - { name: spawn_agent, input: { id: "a${String(i + 1).padStart(2, '0')}", name: "A${i + 1}", description: "parallel worker", systemPrompt: "You work.", tools: [file_write, file_read, todo_write, list_participants] } }`).join('\n')}
  - { agent: resource-agent, on: tool-result, text: "Spawned." }
  - on: message
    repeat: true
    text: "On it: {{lastText}} — writing, reading and listing in one batch."
    toolCalls:
      - { name: file_write, input: { path: "out/{{agent}}.txt", content: "{{agent}}: {{lastText}}\\n" } }
      - { name: file_read, input: { path: "seed.txt" } }
      - { name: list_participants, input: {} }
      - { name: todo_write, input: { todos: [{ id: "t", content: "{{lastText}}", status: done }] } }
  - { on: tool-result, repeat: true, text: "Done with {{firstText}}." }
  - { on: tool-error, repeat: true, text: "Failed {{firstText}}." }
`;

test(`one process, ${N} agents spawned through the registry and sent to at once, 3 rounds: no interleaved or lost line in any file`, { timeout: 120_000 }, async (t) => {
  await withTempDir(async (dir) => {
    await setupCrashWorkspace(dir);
    const layout = layoutFor(dir);
    // Let resource-agent hand out the worker tools (it can only grant what it holds).
    const store = createParticipantStore(layout);
    const resource = (await store.loadAll(TRUSTED)).find((p) => p.id === 'resource-agent')!;
    assert.equal(resource.kind, 'agent');
    await store.save({ ...resource, tools: [...(resource.kind === 'agent' ? resource.tools : []), 'file_write', 'file_read', 'todo_write'] });
    await writeFile(join(dir, 'script.yaml'), SCRIPT);
    // This test is about concurrent appends, not compaction: the default window, not the crash suite's tiny one.
    await writeFile(join(dir, '.legion', 'config.yaml'), 'runtime:\n  maxIterations: 3\n');

    const events: LegionEvent[] = [];
    const app = await composeApp(appContext(dir, { LEGION_PROVIDER: 'faux', LEGION_FAUX_SCRIPT: join(dir, 'script.yaml') }), {
      onBus: (bus) => void bus.subscribeAll((e) => void events.push(e)),
    });
    const { core } = app;
    // The user approves every write as it arrives (approvals.jsonl sees concurrent raises and resolves).
    core.bus.subscribe('approval-request', (e) => void setImmediate(() => core.resolveApprovals([e.requestId], 'approved')));
    const spawn = core.send('resource-agent', 'spawn the workers');
    assert.ok(spawn.ok);
    await core.idle(spawn.sessionId);
    const ids = Array.from({ length: N }, (_, i) => `a${String(i + 1).padStart(2, '0')}`);
    assert.deepEqual(ids.filter((id) => !core.participants().some((p) => p.id === id)), [], 'all spawned');

    for (let round = 0; round < 3; round++) {
      const sent = ids.map((id) => core.send(id, `round ${round} for ${id}`));
      const sessionIds = sent.map((s) => (assert.ok(s.ok), s.sessionId));
      const answers = await Promise.all(sessionIds.map((id) => core.idle(id)));
      answers.forEach((a, i) => assert.equal(a, `Done with round 0 for ${ids[i]}.`));
    }
    const inMemory = new Map(core.sessions().map((s) => [s.id, s.messageCount]));
    await app.close('done');

    const runDir = layout.runDir(app.runId);
    const files = (await listFiles(dir)).filter((f) => f.startsWith('.legion/') && f.endsWith('.jsonl'));
    let lines = 0;
    for (const f of files) {
      const read = await readJsonlLines(join(dir, f));
      assert.deepEqual(read.broken, [], `${f}: lines that do not parse`);
      assert.equal(read.unterminated, false, f);
      lines += read.complete.length;
    }
    // Session files: exactly what the core holds.
    for (const [sessionId, count] of inMemory) {
      const read = await readJsonlLines(layout.sessionFile(app.runId, sessionId));
      assert.equal(read.complete.length, count, sessionId);
    }
    assert.equal(inMemory.size, N + 1);
    // Ledger: every seq stored once (a line is one event, or a session's text deltas joined, see
    // events/coalesce.ts); one message-add per session line; the events seen are the events stored.
    const ledger = (await readJsonlLines(join(runDir, 'events.jsonl'))).complete.map((l) => JSON.parse(l) as LegionEvent);
    ledger.forEach((e, i) => i > 0 && assert.ok(e.seq > ledger[i - 1]!.seq));
    assert.equal(ledger.reduce((n, e) => n + (e.type === 'text-delta' ? e.joined ?? 1 : 1), 0), events.length);
    assert.equal(ledger.at(-1)!.seq, events.length);
    assert.deepEqual(ledger.filter((e) => e.type !== 'text-delta').map((e) => e.seq), events.filter((e) => e.type !== 'text-delta').map((e) => e.seq));
    assert.equal(ledger.filter((e) => e.type === 'message-add').length, [...inMemory.values()].reduce((a, b) => a + b, 0));
    // Approvals: one request and one resolve per write; audit: one line per tool call.
    const approvals = (await readJsonlLines(join(runDir, 'approvals.jsonl'))).complete.map((l) => JSON.parse(l) as { kind: string });
    assert.equal(approvals.filter((a) => a.kind === 'request').length, 3 * N);
    assert.equal(approvals.filter((a) => a.kind === 'resolve').length, 3 * N);
    const audit = (await listFiles(join(dir, '.legion', 'audit'))).map((f) => join(dir, '.legion', 'audit', f));
    let auditLines = 0;
    for (const f of audit) auditLines += (await readJsonlLines(f)).complete.length;
    assert.equal(auditLines, ledger.filter((e) => e.type === 'tool-call-start').length);
    assert.equal(auditLines, N + 3 * N * 4);
    for (const id of ids) assert.equal(await readFile(join(dir, 'out', `${id}.txt`), 'utf8'), `${id}: round 2 for ${id}\n`);
    assert.ok(lines > 1000, `${lines} lines checked`);
    t.diagnostic(JSON.stringify({ agents: N, sessions: inMemory.size, files: files.length, lines, ledgerEvents: ledger.length, auditLines, approvals: approvals.length }));
  });
});
