import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { layoutFor } from '../../../src/storage/layout';
import { createRunStore } from '../../../src/session/run-store';
import type { OpenCalls } from '../../../src/session/types';
import type { Message } from '../../../src/model/message';
import { planRepair } from '../../../src/model/repair';
import { withTempDir } from '../../helpers/tmp';
import { assistantTools, counterIds, steppingClock, T0, userText } from './helpers';

const USER_LANE = 'session-user__ur-agent__default';
const NESTED = 'session-ur-agent__scribe__files';
const lines = (...ms: Message[]): string => ms.map((m) => JSON.stringify(m) + '\n').join('');

test('load with leaveOpen (asked once with every open session): the sessions it leaves open stay open on disk and are listed in `leftOpen`; the others are repaired; inspect repairs all and writes nothing', async () => {
  await withTempDir(async (dir) => {
    const layout = layoutFor(dir);
    const runs = createRunStore(layout, steppingClock(), counterIds());
    const run = await runs.create(T0);
    await mkdir(layout.sessionsDir(run.id), { recursive: true });
    const open = [userText('write it', 1), assistantTools([{ id: 'tu_1', name: 'file_write', input: { path: 'x', content: 'y' } }, { id: 'tu_2', name: 'file_read', input: { path: 'x' } }], '', 2)];
    const nested = [userText('write it', 1), assistantTools([{ id: 'tu_9', name: 'file_write', input: { path: 'x', content: 'y' } }], '', 2)];
    await writeFile(layout.sessionFile(run.id, USER_LANE), lines(...open));
    await writeFile(layout.sessionFile(run.id, NESTED), lines(...nested));

    const asked: OpenCalls[] = [];
    const shown = await runs.inspect(run, T0);
    assert.equal(shown.sessions.get(USER_LANE)!.messages().length, 3, 'inspect repairs in memory');
    assert.equal(await readFile(layout.sessionFile(run.id, USER_LANE), 'utf8'), lines(...open), 'inspect writes nothing');

    const loaded = await runs.load(run, T0, { leaveOpen: (o) => (asked.push(...o), new Set([USER_LANE])) });
    assert.deepEqual(asked.map((o) => [o.sessionId, o.key.initiatorId, o.toolUseIds, o.uses.map((u) => u.name)]), [[NESTED, 'ur-agent', ['tu_9'], ['file_write']], [USER_LANE, 'user', ['tu_1', 'tu_2'], ['file_write', 'file_read']]]);
    assert.deepEqual(loaded.leftOpen!.map((k) => k.sessionId), [USER_LANE]);
    assert.deepEqual(loaded.repairs.map((r) => r.sessionId), [NESTED]);
    assert.equal(await readFile(layout.sessionFile(run.id, USER_LANE), 'utf8'), lines(...open), 'kept open: nothing appended');
    assert.deepEqual(loaded.sessions.get(USER_LANE)!.messages(), open);
    assert.deepEqual(planRepair(open, T0.toISOString()).problems, [], 'an open last batch is no problem (it is answered or resumed)');
    assert.equal(loaded.sessions.get(NESTED)!.messages().length, 3);

    const defaults = await runs.load(run, T0);
    assert.deepEqual(defaults.leftOpen, []);
    assert.deepEqual(defaults.repairs.map((r) => r.sessionId), [USER_LANE], 'without leaveOpen every session is repaired');
  });
});
