import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { appendFile, readFile, readdir, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { layoutFor, type Layout } from '../../../src/storage/layout';
import { createRunStore } from '../../../src/session/run-store';
import { acquireRunLock } from '../../../src/session/lock';
import type { Message } from '../../../src/model/message';
import { runCli } from '../../helpers/cli';
import { withTempDir } from '../../helpers/tmp';

const at = (s: number): string => new Date(Date.UTC(2026, 10, 21, 19, 30, s)).toISOString();
const user = (text: string, s: number): Message => ({ role: 'user', content: [{ type: 'text', text }], at: at(s) });
const agent = (text: string, s: number): Message => ({ role: 'assistant', content: [{ type: 'text', text }], at: at(s) });

/** Two runs: an older one with one session, the latest with two sessions and a title. */
async function seed(dir: string): Promise<{ layout: Layout; older: string; latest: string }> {
  const layout = layoutFor(dir);
  let n = 0;
  const runs = createRunStore(layout, () => new Date(at(0)), () => `r${++n}`);
  const older = await runs.create(new Date('2026-11-20T08:00:00Z'));
  const o = await runs.load(older, new Date(at(0)));
  o.sessions.open({ initiatorId: 'user', responderId: 'ur-agent', name: 'default' }).session.append(user('old question', 1));
  const latest = await runs.create(new Date('2026-11-21T19:30:00Z'));
  latest.title = 'Write a haiku about the sea';
  await runs.save(latest);
  const l = await runs.load(latest, new Date(at(0)));
  const main = l.sessions.open({ initiatorId: 'user', responderId: 'ur-agent', name: 'default' }).session;
  main.append(user('Write a haiku about the sea', 1));
  main.append({ role: 'assistant', content: [{ type: 'text', text: 'Asking the scribe.' }, { type: 'tool_use', id: 't1', name: 'communicator', input: { targetId: 'scribe', message: 'haiku' } }], at: at(2) });
  main.append({ role: 'user', content: [{ type: 'tool_result', toolUseId: 't1', content: 'Waves fold into foam' }], at: at(9) });
  main.append(agent('Here it is: Waves fold into foam', 10));
  const side = l.sessions.open({ initiatorId: 'ur-agent', responderId: 'scribe', name: 'default' }).session;
  side.append(user('haiku', 3));
  side.append(agent('Waves fold into foam', 8));
  return { layout, older: older.id, latest: latest.id };
}

test('legion runs: newest first with sessions, messages and title; an empty workspace says so', async () => {
  await withTempDir(async (dir) => {
    const empty = await runCli(['runs'], { cwd: dir });
    assert.deepEqual([empty.code, empty.stdout, empty.stderr], [0, 'no runs yet: start one with `legion` or `legion run <message>`\n', '']);
    const { older, latest } = await seed(dir);
    const r = await runCli(['runs'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.equal(r.stdout, [
      'RUN                     CREATED              SESSIONS  MESSAGES  TITLE',
      `${latest}  2026-11-21 19:30:00         2         6  Write a haiku about the sea`,
      `${older}  2026-11-20 08:00:00         1         1`,
      '',
    ].join('\n'));
    const extra = await runCli(['runs', 'x'], { cwd: dir });
    assert.equal(extra.code, 2);
  });
});

test('legion show: the latest run\'s sessions by last activity; an older run by id', async () => {
  await withTempDir(async (dir) => {
    const { older, latest } = await seed(dir);
    const r = await runCli(['show'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, [
      `run ${latest} · created 2026-11-21 19:30:00 · Write a haiku about the sea`,
      '',
      'SESSION                            PARTICIPANTS       NAME     MESSAGES  LAST ACTIVITY',
      'session-user__ur-agent__default    user → ur-agent    default         4  2026-11-21 19:30:10',
      'session-ur-agent__scribe__default  ur-agent → scribe  default         2  2026-11-21 19:30:08',
      '',
    ].join('\n'));
    const o = await runCli(['show', older], { cwd: dir });
    assert.equal(o.code, 0);
    assert.match(o.stdout, new RegExp(`^run ${older} · created 2026-11-20 08:00:00\n`));
    assert.match(o.stdout, /session-user__ur-agent__default {2}user → ur-agent {2}default {9}1/);
  });
});

test('legion show --session prints the transcript (with or without the session- prefix)', async () => {
  await withTempDir(async (dir) => {
    const { latest } = await seed(dir);
    const r = await runCli(['show', '--session', 'session-user__ur-agent__default'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, [
      'user → ur-agent',
      '',
      'user · 2026-11-21 19:30:01',
      '  Write a haiku about the sea',
      '',
      'ur-agent · 2026-11-21 19:30:02',
      '  Asking the scribe.',
      '  ⚙ communicator scribe: haiku',
      '    ↳ ok: Waves fold into foam',
      '',
      'ur-agent · 2026-11-21 19:30:10',
      '  Here it is: Waves fold into foam',
      '',
    ].join('\n'));
    const short = await runCli(['show', latest, '--session', 'ur-agent__scribe__default'], { cwd: dir });
    assert.equal(short.code, 0);
    assert.match(short.stdout, /^ur-agent → scribe\n/);
  });
});

test('unknown run or session, a damaged run file: one line on stderr, exit 1', async () => {
  await withTempDir(async (dir) => {
    const none = await runCli(['show'], { cwd: dir });
    assert.deepEqual([none.code, none.stdout, none.stderr], [1, '', 'legion: no runs yet: start one with `legion` or `legion run <message>`\n']);
    const { layout, latest, older } = await seed(dir);
    const r = await runCli(['show', 'nope'], { cwd: dir });
    assert.deepEqual([r.code, r.stdout, r.stderr], [1, '', 'legion: no run "nope" (see `legion runs`)\n']);
    const s = await runCli(['show', '--session', 'user__nobody__default'], { cwd: dir });
    assert.deepEqual([s.code, s.stdout, s.stderr], [1, '', `legion: no session "user__nobody__default" in run ${latest} (see \`legion show ${latest}\`)\n`]);
    const file = layout.runFile(latest);
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.slice(0, 30));
    const d = await runCli(['show'], { cwd: dir });
    assert.equal(d.code, 1);
    assert.match(d.stderr, new RegExp(`^legion: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: not valid JSON [^\n]*\n$`));
    const list = await runCli(['runs'], { cwd: dir });
    assert.equal(list.code, 0);
    assert.match(list.stdout, new RegExp(older));
    assert.match(list.stderr, /^legion: warning: .*run\.json: not valid JSON/);
    assert.equal(await readFile(file, 'utf8'), text.slice(0, 30));
  });
});

test('legion show is read-only: works while another process holds the lock, repairs only for display, writes nothing', async () => {
  await withTempDir(async (dir) => {
    const { layout, latest } = await seed(dir);
    const held = acquireRunLock(layout, latest, { pid: process.pid, hostname: hostname(), now: new Date() });
    assert.ok(held.ok);
    const file = layout.sessionFile(latest, 'session-ur-agent__scribe__default');
    await appendFile(file, JSON.stringify({ role: 'assistant', content: [{ type: 'tool_use', id: 'w1', name: 'file_write', input: { path: 'poem.md', content: 'x' } }], at: at(20) }) + '\n{"role":"us');
    const before = await snapshot(layout.runDir(latest));
    const list = await runCli(['show'], { cwd: dir });
    assert.equal(list.code, 0);
    assert.match(list.stdout, /session-ur-agent__scribe__default {2}ur-agent → scribe {2}default {9}4/);
    assert.match(list.stderr, /^legion: note: .*session-ur-agent__scribe__default\.jsonl:4: dropped a torn last line/);
    const t = await runCli(['show', '--session', 'session-ur-agent__scribe__default'], { cwd: dir });
    assert.equal(t.code, 0);
    assert.match(t.stdout, / {2}⚙ file_write poem\.md\n {4}↳ error: interrupted: the tool call did not complete\n$/);
    assert.deepEqual(await snapshot(layout.runDir(latest)), before);
    held.lock.release();
    assert.equal(existsSync(layout.runLock(latest)), false);
  });
});

async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) out[`${entry.parentPath}/${entry.name}`] = await readFile(`${entry.parentPath}/${entry.name}`, 'utf8');
  }
  return out;
}
