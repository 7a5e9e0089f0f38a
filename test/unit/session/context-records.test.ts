import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { layoutFor } from '../../../src/storage/layout';
import { createRunStore } from '../../../src/session/run-store';
import { parseJsonl } from '../../../src/storage/jsonl';
import { validateMessage } from '../../../src/session/message-check';
import type { Message } from '../../../src/model/message';
import type { CompactionRecord, EvictionRecord } from '../../../src/context/records';
import { withTempDir } from '../../helpers/tmp';
import { assistantText, assistantTools, counterIds, results, steppingClock, T0, userText } from './helpers';

const A = 'session-user__ur-agent__default';
const lines = (...ms: unknown[]): string => ms.map((m) => JSON.stringify(m) + '\n').join('');
const compaction: CompactionRecord = { type: 'compaction', at: T0.toISOString(), summary: 'We read a.txt.', firstKept: 2, tokensBefore: 900, tokensAfter: 120 };
const eviction: EvictionRecord = { type: 'eviction', at: T0.toISOString(), before: 2, tokensBefore: 1000, tokensAfter: 900 };

test('session file: context records load beside the messages, never as messages; appends keep both', async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    const runs = createRunStore(layout, steppingClock(), counterIds());
    const run = await runs.create(T0);
    await mkdir(layout.sessionsDir(run.id), { recursive: true });
    const history: Message[] = [userText('read a.txt'), assistantTools([{ id: 't1', name: 'file_read' }]), results([{ id: 't1', content: 'A'.repeat(50) }]), assistantText('done')];
    await writeFile(layout.sessionFile(run.id, A), lines(history[0], history[1], eviction, history[2], compaction, history[3]));
    const loaded = await runs.load(run, T0);
    assert.deepEqual(loaded.issues, []);
    const session = loaded.sessions.get(A)!;
    assert.deepEqual(session.messages(), history);
    assert.deepEqual(session.contextRecords(), [eviction, compaction]);
    session.append(userText('next'));
    session.appendContext({ ...compaction, firstKept: 4, summary: 'later' });
    const reread = await runs.load(run, T0);
    assert.equal(reread.sessions.get(A)!.messages().length, 5);
    assert.equal(reread.sessions.get(A)!.contextRecords().length, 3);
    // Nothing was rewritten: the file only grew.
    assert.ok((await readFile(layout.sessionFile(run.id, A), 'utf8')).startsWith(lines(history[0], history[1], eviction)));
  });
});

test('session file: a broken context line is reported with file:line and skipped; a torn one at the end is dropped', async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    const runs = createRunStore(layout, steppingClock(), counterIds());
    const run = await runs.create(T0);
    await mkdir(layout.sessionsDir(run.id), { recursive: true });
    const file = layout.sessionFile(run.id, A);
    await writeFile(file, lines(userText('hi'), { type: 'compaction', summary: 3 }, assistantText('yo')) + JSON.stringify(compaction).slice(0, 30));
    const loaded = await runs.load(run, T0);
    assert.equal(loaded.sessions.get(A)!.messages().length, 2);
    assert.deepEqual(loaded.sessions.get(A)!.contextRecords(), []);
    assert.equal(loaded.issues.length, 2);
    assert.match(loaded.issues[0]!.message, new RegExp(`${file}:2: not a context record: `));
    assert.equal(loaded.issues[1]!.kind, 'torn');
  });
});

test('older loaders (messages only) skip a context line as one invalid line and keep every message', () => {
  const text = lines(userText('hi'), compaction, assistantText('yo'));
  const read = parseJsonl(text, 'f.jsonl', validateMessage);
  assert.equal(read.records.length, 2);
  assert.equal(read.issues.length, 1);
  assert.equal(read.issues[0]!.line, 2);
});
