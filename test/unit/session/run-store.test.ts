import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { layoutFor, type Layout } from '../../../src/storage/layout';
import { createRunStore, type FileRunStore } from '../../../src/session/run-store';
import { LegionError } from '../../../src/errors';
import { INTERRUPTED_RESULT } from '../../../src/model/repair';
import type { RunRecord } from '../../../src/session/types';
import type { Message } from '../../../src/model/message';
import { withTempDir } from '../../helpers/tmp';
import { assistantText, assistantTools, counterIds, results, steppingClock, T0, userText } from './helpers';


const A = 'session-user__ur-agent__default';
const B = 'session-ur-agent__scribe__files';
const lines = (...ms: Message[]): string => ms.map((m) => JSON.stringify(m) + '\n').join('');

async function setup(dir: string): Promise<{ layout: Layout; runs: FileRunStore; run: RunRecord }> {
  const layout = layoutFor(dir);
  const runs = createRunStore(layout, steppingClock(), counterIds());
  const run = await runs.create(T0);
  await mkdir(layout.sessionsDir(run.id), { recursive: true });
  return { layout, runs, run };
}

test('create writes run.json; get, save (title) and list read it back', async () => {
  await withTempDir(async (dir) => {
    const { layout, runs, run } = await setup(dir);
    assert.equal(run.id, '2026-11-21T19-30-00-a00001');
    assert.deepEqual(JSON.parse(await readFile(layout.runFile(run.id), 'utf8')), { version: 1, id: run.id, createdAt: T0.toISOString(), updatedAt: T0.toISOString() });
    run.title = 'Write a haiku';
    run.updatedAt = '2026-11-21T20:00:00.000Z';
    await runs.save({ ...run, sessionCount: 3 } as RunRecord);
    assert.deepEqual(await runs.get(run.id), run, 'extra fields are not written');
    assert.equal(await runs.get('no-such-run'), null);
    assert.equal(await runs.get('../../etc'), null);
  });
});

test('latest and list: newest first by createdAt, then id; session counts; empty workspace', async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    const runs = createRunStore(layout, steppingClock(), counterIds());
    assert.equal(await runs.latest(), null);
    assert.deepEqual(await runs.list(), []);
    const r1 = await runs.create(new Date('2026-11-20T10:00:00Z'));
    const r3 = await runs.create(new Date('2026-11-22T10:00:00Z'));
    const r2 = await runs.create(new Date('2026-11-21T10:00:00Z'));
    const r3b = await runs.create(new Date('2026-11-22T10:00:00Z'));
    await mkdir(layout.sessionsDir(r2.id), { recursive: true });
    await writeFile(layout.sessionFile(r2.id, A), lines(userText('hi')));
    await writeFile(layout.sessionFile(r2.id, B), lines(userText('yo')));
    await mkdir(layout.runDir('half-created-no-run-json'), { recursive: true });
    assert.equal((await runs.latest())!.id, r3b.id);
    // The run a start resumes, as its file holds it: latest() reads no session folder (it counts none).
    await mkdir(layout.sessionsDir(r3b.id), { recursive: true });
    await writeFile(layout.sessionFile(r3b.id, A), lines(userText('hi')));
    assert.deepEqual(await runs.latest(), { version: 1, id: r3b.id, createdAt: r3b.createdAt, updatedAt: r3b.updatedAt });
    const listed = await runs.list();
    assert.deepEqual(listed.map((r) => r.id), [r3b.id, r3.id, r2.id, r1.id]);
    assert.deepEqual(listed.map((r) => r.sessionCount), [1, 0, 2, 0]);
  });
});

test('a torn last line is dropped and reported; the other sessions are intact; the tail is cut so appends stay parseable', async () => {
  await withTempDir(async (dir) => {
    const { layout, runs, run } = await setup(dir);
    const a = [userText('one', 1), assistantText('two', 2), userText('three', 3)];
    const b = [userText('b1', 1), assistantText('b2', 2)];
    await writeFile(layout.sessionFile(run.id, A), lines(...a) + JSON.stringify(assistantText('cut')).slice(0, 25));
    await writeFile(layout.sessionFile(run.id, B), lines(...b));
    const loaded = await runs.load(run, T0);
    assert.equal(loaded.issues.length, 1);
    assert.equal(loaded.issues[0]!.kind, 'torn');
    assert.equal(loaded.issues[0]!.line, 4);
    assert.ok(loaded.issues[0]!.message.startsWith(`${layout.sessionFile(run.id, A)}:4: dropped a torn last line`));
    assert.deepEqual(loaded.sessions.get(A)!.messages(), a);
    assert.deepEqual(loaded.sessions.get(B)!.messages(), b);
    assert.equal(await readFile(layout.sessionFile(run.id, A), 'utf8'), lines(...a));
    loaded.sessions.get(A)!.append(assistantText('four', 4));
    const again = await runs.load(run, T0);
    assert.deepEqual(again.issues, []);
    assert.deepEqual(again.sessions.get(A)!.messages(), [...a, assistantText('four', 4)]);
  });
});

test('an unterminated but complete last line is kept and gets its newline', async () => {
  await withTempDir(async (dir) => {
    const { layout, runs, run } = await setup(dir);
    await writeFile(layout.sessionFile(run.id, A), lines(userText('one')) + JSON.stringify(assistantText('two')));
    const loaded = await runs.load(run, T0);
    assert.deepEqual(loaded.issues, []);
    assert.equal(loaded.sessions.get(A)!.messages().length, 2);
    assert.equal(await readFile(layout.sessionFile(run.id, A), 'utf8'), lines(userText('one'), assistantText('two')));
  });
});

test('broken middle lines are reported with file:line and skipped; the file is not rewritten', async () => {
  await withTempDir(async (dir) => {
    const { layout, runs, run } = await setup(dir);
    const file = layout.sessionFile(run.id, A);
    const text = lines(userText('one')) + '{"role":"user","content":[{"ty\n' + '{"role":"bot","content":[],"at":"x"}\n' + lines(assistantText('four'), userText('five'));
    await writeFile(file, text);
    await writeFile(layout.sessionsDir(run.id) + '/notes.jsonl', 'stray');
    const loaded = await runs.load(run, T0);
    const messages = loaded.issues.map((i) => i.message).sort();
    assert.equal(messages.length, 3);
    assert.match(messages[0]!, /notes\.jsonl: not a session file name/);
    assert.ok(messages[1]!.startsWith(`${file}:2: not valid JSON`), messages[1]);
    assert.ok(messages[2]!.startsWith(`${file}:3: not a message: role`), messages[2]);
    assert.deepEqual(loaded.sessions.get(A)!.messages().map((m) => (m.content[0] as { text: string }).text), ['one', 'four', 'five']);
    assert.equal(await readFile(file, 'utf8'), text);
  });
});

test('messages with unknown extra keys are accepted through the zod fallback (keys stripped)', async () => {
  await withTempDir(async (dir) => {
    const { layout, runs, run } = await setup(dir);
    await writeFile(layout.sessionFile(run.id, A), JSON.stringify({ ...userText('x'), extra: 1 }) + '\n');
    const loaded = await runs.load(run, T0);
    assert.deepEqual(loaded.issues, []);
    assert.deepEqual(loaded.sessions.get(A)!.messages(), [userText('x')]);
  });
});

test('repair on load appends interrupted results (never rewrites) and is idempotent', async () => {
  await withTempDir(async (dir) => {
    const { layout, runs, run } = await setup(dir);
    const file = layout.sessionFile(run.id, A);
    const history = [userText('go', 1), assistantTools([{ id: 'u1', name: 'shell', input: { command: 'make' } }, { id: 'u2', name: 'glob' }], 'running', 2)];
    // A crash mid-write of the results message leaves a torn tail too.
    const before = lines(...history);
    await writeFile(file, before + '{"role":"user","content":[{"type":"tool_res');
    await writeFile(layout.sessionFile(run.id, B), lines(userText('fine'), assistantText('ok')));
    const now = new Date('2026-11-21T21:00:00Z');
    const loaded = await runs.load(run, now);
    assert.deepEqual(loaded.repairs, [{ sessionId: A, answered: ['u1', 'u2'] }]);
    assert.deepEqual(loaded.issues.map((i) => i.kind), ['torn']);
    const repaired = [...loaded.sessions.get(A)!.messages()];
    assert.equal(repaired.length, 3);
    assert.deepEqual(repaired[2], {
      role: 'user',
      at: now.toISOString(),
      content: [{ type: 'tool_result', toolUseId: 'u1', content: INTERRUPTED_RESULT, isError: true }, { type: 'tool_result', toolUseId: 'u2', content: INTERRUPTED_RESULT, isError: true }],
    });
    const after = await readFile(file, 'utf8');
    assert.ok(after.startsWith(before), 'history is appended to, not rewritten');
    assert.equal(after.slice(before.length), JSON.stringify(repaired[2]) + '\n');
    // The session is valid for the next turn.
    loaded.sessions.get(A)!.append(userText('again', 5));
    const second = await runs.load(run, new Date('2026-11-21T22:00:00Z'));
    assert.deepEqual(second.repairs, []);
    assert.deepEqual(second.issues, []);
    assert.deepEqual(second.sessions.get(A)!.messages(), [...repaired, userText('again', 5)]);
  });
});

test('inspect repairs in memory only: nothing on disk changes, appends are refused', async () => {
  await withTempDir(async (dir) => {
    const { layout, runs, run } = await setup(dir);
    const file = layout.sessionFile(run.id, A);
    const text = lines(userText('go'), assistantTools([{ id: 'u1', name: 'shell' }])) + '{"torn';
    await writeFile(file, text);
    const seen = await runs.inspect(run, T0);
    assert.deepEqual(seen.repairs, [{ sessionId: A, answered: ['u1'] }]);
    assert.equal(seen.sessions.get(A)!.messages().length, 3);
    assert.throws(() => seen.sessions.get(A)!.append(assistantText('x')), /read-only/);
    assert.equal(await readFile(file, 'utf8'), text);
  });
});

test('a partial results message deeper in the history is reported as a problem, not rewritten', async () => {
  await withTempDir(async (dir) => {
    const { layout, runs, run } = await setup(dir);
    await writeFile(layout.sessionFile(run.id, A), lines(userText('go'), assistantTools([{ id: 'u1', name: 'a' }, { id: 'u2', name: 'b' }]), results([{ id: 'u1', content: 'ok' }]), assistantText('hm')));
    const loaded = await runs.load(run, T0);
    assert.deepEqual(loaded.repairs, []);
    assert.equal(loaded.issues.length, 1);
    assert.match(loaded.issues[0]!.message, /tool_use u2 has no result/);
  });
});

test('run.json cut in half: one clear LegionError naming the file, nothing overwritten; list skips it, scan reports it', async () => {
  await withTempDir(async (dir) => {
    const { layout, runs, run } = await setup(dir);
    const older = await createRunStore(layout, steppingClock(), counterIds('b')).create(new Date('2026-01-01T00:00:00Z'));
    const file = layout.runFile(run.id);
    const full = await readFile(file, 'utf8');
    const half = full.slice(0, Math.floor(full.length / 2));
    await writeFile(file, half);
    for (const attempt of [() => runs.get(run.id), () => runs.latest()]) {
      await assert.rejects(attempt, (e: unknown) => {
        assert.ok(e instanceof LegionError);
        assert.ok(e.message.startsWith(`${file}: not valid JSON`), e.message);
        assert.match(e.message, /restore it, or start a new run with --new/);
        assert.equal(e.message.includes('\n'), false);
        return true;
      });
    }
    assert.deepEqual((await runs.list()).map((r) => r.id), [older.id]);
    const scan = await runs.scan();
    assert.deepEqual(scan.damaged.map((d) => d.runId), [run.id]);
    assert.equal(await readFile(file, 'utf8'), half);
  });
});

test('run.json with a wrong shape, a foreign id or a newer version: clear errors', async () => {
  await withTempDir(async (dir) => {
    const { layout, runs, run } = await setup(dir);
    const file = layout.runFile(run.id);
    await writeFile(file, JSON.stringify({ version: 1, id: run.id, createdAt: 5 }));
    await assert.rejects(runs.get(run.id), new RegExp(`^LegionError: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: createdAt: `));
    await writeFile(file, JSON.stringify({ version: 1, id: 'other', createdAt: 'x', updatedAt: 'y' }));
    await assert.rejects(runs.get(run.id), /id "other" does not match its folder/);
    await writeFile(file, JSON.stringify({ version: 2, id: run.id }));
    await assert.rejects(runs.get(run.id), /made by a newer Legion/);
  });
});

test('a damaged run older than the newest readable one does not stop latest()', async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    const runs = createRunStore(layout, steppingClock(), counterIds());
    const old = await runs.create(new Date('2026-01-01T00:00:00Z'));
    const fresh = await runs.create(new Date('2026-02-01T00:00:00Z'));
    await writeFile(layout.runFile(old.id), '{"version":1,');
    assert.equal((await runs.latest())!.id, fresh.id);
  });
});
