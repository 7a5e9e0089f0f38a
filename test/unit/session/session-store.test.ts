import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, stat } from 'node:fs/promises';
import { existsSync, statSync } from 'node:fs';
import { layoutFor } from '../../../src/storage/layout';
import { createSessionStore } from '../../../src/session/session-store';
import { SessionInvariantError, appendProblem } from '../../../src/session/invariant';
import { createRunStore } from '../../../src/session/run-store';
import type { Message } from '../../../src/model/message';
import { withTempDir } from '../../helpers/tmp';
import { assistantText, assistantTools, counterIds, results, steppingClock, T0, userText } from './helpers';

const key = { initiatorId: 'user', responderId: 'ur-agent', name: 'default' };

test('append writes one JSONL line per message, synchronously; a reload gives the same history', async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    const runs = createRunStore(layout, steppingClock(), counterIds());
    const run = await runs.create(T0);
    const store = (await runs.load(run, T0)).sessions;
    const { session, created } = store.open(key);
    assert.equal(created, true);
    assert.equal(session.id, 'session-user__ur-agent__default');
    assert.equal(existsSync(layout.sessionFile(run.id, session.id)), false, 'the file appears on first append');
    const history: Message[] = [
      userText('write a haiku\nabout "the sea"', 1),
      assistantTools([{ id: 't1', name: 'file_write', input: { path: 'a.md', content: 'x' } }, { id: 't2', name: 'shell', input: { command: 'ls' } }], 'on it', 2),
      results([{ id: 't2', content: 'a.md' }, { id: 't1', content: 'denied', isError: true }], 3),
      assistantText('done ✓ — 🌊', 4),
    ];
    for (const [i, m] of history.entries()) {
      session.append(m);
      // Synchronous: the line is on disk when append returns.
      const text: string = await readFile(layout.sessionFile(run.id, session.id), 'utf8');
      assert.equal(text.split('\n').length, i + 2);
    }
    assert.deepEqual(session.messages(), history);
    assert.equal(session.lastActivity(), history[3]!.at);
    assert.equal(store.open(key).created, false);
    assert.equal(store.get(session.id), session);
    assert.deepEqual(store.list().map((s) => s.id), [session.id]);

    const reloaded = await runs.load(run, T0);
    assert.deepEqual(reloaded.issues, []);
    assert.deepEqual(reloaded.repairs, []);
    assert.deepEqual(reloaded.sessions.get(session.id)!.messages(), history);
    assert.deepEqual(reloaded.sessions.get(session.id)!.key, key);
  });
});

test('a session without messages reports the time it was opened as last activity', async () => {
  await withTempDir(async (dir) => {
    const store = createSessionStore(layoutFor(dir), 'r', { clock: () => T0 });
    assert.equal(store.open({ initiatorId: 'user', responderId: 'x', name: 'notes' }).session.lastActivity(), T0.toISOString());
    assert.throws(() => store.open({ initiatorId: 'user', responderId: 'x', name: 'Bad Name' }), /invalid session name/);
  });
});

test('appends that break the invariant are refused, nothing is written, the session stays usable', async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    const store = createSessionStore(layout, 'r', { clock: () => T0 });
    const { session } = store.open(key);
    const file = layout.sessionFile('r', session.id);
    const refuse = (m: Message, pattern: RegExp): void => {
      const before = session.messages().length;
      const size = existsSync(file) ? readFileSyncSize(file) : -1;
      assert.throws(() => session.append(m), (e: unknown) => e instanceof SessionInvariantError && pattern.test(e.message));
      assert.equal(session.messages().length, before);
      assert.equal(existsSync(file) ? readFileSyncSize(file) : -1, size);
    };
    refuse(results([{ id: 'nope', content: 'x' }]), /answers no tool_use/);
    session.append(userText('hi'));
    refuse({ role: 'user', content: [{ type: 'tool_use', id: 'x', name: 'shell', input: {} }], at: 'now' }, /tool_use \(x\) in a user message/);
    session.append(assistantTools([{ id: 'a', name: 'shell' }, { id: 'b', name: 'glob' }]));
    refuse(assistantText('moving on'), /assistant message after unanswered tool_use a, b/);
    refuse(userText('what now?'), /must answer each/);
    refuse(results([{ id: 'a', content: 'ok' }]), /must answer each of them/);
    refuse(results([{ id: 'a', content: 'ok' }, { id: 'a', content: 'again' }, { id: 'b', content: 'ok' }]), /answered twice/);
    refuse(results([{ id: 'a', content: 'ok' }, { id: 'b', content: 'ok' }, { id: 'c', content: 'ok' }]), /c answers no tool_use/);
    refuse({ role: 'assistant', content: [{ type: 'tool_result', toolUseId: 'a', content: 'x' }], at: 'now' }, /tool_result \(a\) in an assistant/);
    // The right answer goes through; results may be followed by text in the same message.
    const answer = results([{ id: 'b', content: 'ok' }, { id: 'a', content: 'no', isError: true }]);
    session.append({ ...answer, content: [...answer.content, { type: 'text', text: 'and also…' }] });
    refuse(results([{ id: 'a', content: 'late' }]), /answers no tool_use/);
    session.append(assistantText('fine'));
    assert.equal(session.messages().length, 4);
  });
});

function readFileSyncSize(file: string): number {
  return statSync(file).size;
}

test('appendProblem allows consecutive same-role messages without tool calls', () => {
  assert.equal(appendProblem(undefined, userText('a')), null);
  assert.equal(appendProblem(userText('a'), userText('b')), null);
  assert.equal(appendProblem(assistantText('a'), assistantText('b')), null);
  assert.equal(appendProblem(assistantText('a'), userText('b')), null);
  assert.match(appendProblem(undefined, assistantTools([{ id: 'x', name: 'a' }, { id: 'x', name: 'b' }])) ?? '', /appears twice/);
  // Shapes that would not read back are refused too.
  assert.match(appendProblem(undefined, assistantTools([{ id: '', name: 'a' }])) ?? '', /tool_use without a non-empty "id"/);
  assert.match(appendProblem(undefined, { role: 'user', content: [{ type: 'text', text: 5 as unknown as string }], at: 'x' }) ?? '', /text block/);
  assert.match(appendProblem(undefined, { role: 'user', content: [{ type: 'image' } as never], at: 'x' }) ?? '', /unknown type "image"/);
  assert.match(appendProblem(undefined, { role: 'user', content: [], at: 5 as unknown as string }) ?? '', /"at" is not a string/);
});

test('a read-only store refuses appends', async () => {
  await withTempDir(async (dir) => {
    const store = createSessionStore(layoutFor(dir), 'r', { clock: () => T0, readOnly: true });
    assert.throws(() => store.open(key).session.append(userText('x')), /read-only/);
  });
});

test('concurrency: 20 sessions appended to from 200 async tasks in one process write no interleaved lines', async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    const store = createSessionStore(layout, 'r', { clock: () => T0 });
    const big = 'x'.repeat(70_000); // larger than a pipe buffer: a torn or split write would show
    const tasks = Array.from({ length: 200 }, async (_, t) => {
      const { session } = store.open({ initiatorId: 'ur-agent', responderId: `agent-${t % 20}`, name: 'work' });
      for (let i = 0; i < 10; i++) {
        await new Promise((r) => setImmediate(r));
        session.append(i % 3 === 0 ? userText(`${t}:${i}:${big}`) : userText(`${t}:${i}`));
      }
    });
    await Promise.all(tasks);
    const runs = createRunStore(layout, () => T0, counterIds());
    const loaded = await runs.load({ version: 1, id: 'r', createdAt: T0.toISOString(), updatedAt: T0.toISOString() }, T0);
    assert.deepEqual(loaded.issues, []);
    assert.equal(loaded.sessions.list().length, 20);
    let total = 0;
    for (const s of loaded.sessions.list()) {
      const text = await readFile(layout.sessionFile('r', s.id), 'utf8');
      for (const line of text.trimEnd().split('\n')) JSON.parse(line);
      total += s.messages().length;
      assert.deepEqual(s.messages(), store.get(s.id)!.messages());
    }
    assert.equal(total, 2000);
    assert.ok((await stat(layout.sessionsDir('r'))).isDirectory());
  });
});
