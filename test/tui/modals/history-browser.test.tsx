import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderModals, type ModalHarness } from './harness';
import { createFakeCore, sessionIdOf } from '../../helpers/fake-core';
import { createHistorySource, type HistorySource } from '../../../components/modals/history-source';
import { makeTempDir } from '../../helpers/tmp';
import { createHistoryService } from '../../../src/session/history-service';
import { msg, writeRuns } from '../../helpers/history-fixture';
import { keyArgumentOf } from '../../../src/collective/tools/shipped';

interface Setup {
  readonly h: ModalHarness;
  readonly oldRunId: string;
  readonly switches: { runId: string; sessionId?: string }[];
}

/** A fake core as the current run (two sessions), and one older run on disk. */
async function withHistory(fn: (s: Setup) => Promise<void>, options: { switchRun?: boolean; transcriptNeverLoads?: boolean } = {}): Promise<void> {
  const temp = await makeTempDir();
  const { layout, runs } = await writeRuns(temp.dir, [{
    at: new Date('2026-01-02T10:00:00Z'), title: 'plan the garden',
    sessions: [
      { initiatorId: 'user', responderId: 'ur-agent', messages: [msg('user', 'plan the garden'), msg('assistant', 'Tomatoes go in the sunny bed.\nBasil next to them.')] },
      { initiatorId: 'ur-agent', responderId: 'scribe', name: 'notes', messages: [msg('user', 'note: tomatoes need water'), msg('assistant', 'noted')] },
    ],
  }]);
  const core = createFakeCore({ runId: '2026-03-01T09-00-00-live' });
  core.seed({ initiatorId: 'user', responderId: 'ur-agent' }, [msg('user', 'what about pelicans?', '2026-03-01T09:00:01.000Z'), msg('assistant', 'Pelicans eat fish.', '2026-03-01T09:00:02.000Z')]);
  core.seed({ initiatorId: 'ur-agent', responderId: 'scout', name: 'web' }, [msg('user', 'find pelican facts', '2026-03-01T09:00:03.000Z')]);
  const switches: Setup['switches'] = [];
  const source: HistorySource = createHistorySource({
    runId: core.runId, history: createHistoryService(layout, core, keyArgumentOf), ...(options.switchRun ? { switchRun: (runId: string, sessionId?: string) => void switches.push({ runId, ...(sessionId ? { sessionId } : {}) }) } : {}),
  });
  const history: HistorySource = options.transcriptNeverLoads ? { ...source, transcript: () => new Promise(() => undefined) } : source;
  const h = await renderModals({ core, history, columns: 110, rows: 28 });
  try {
    await fn({ h, oldRunId: runs[0]!.id, switches });
  } finally {
    h.unmount();
    await temp.cleanup();
  }
}


/** Wait (up to 5 s: the disk is read asynchronously) until nothing is loading. */
async function settle(h: ModalHarness): Promise<string> {
  const end = Date.now() + 5000;
  await new Promise((r) => setTimeout(r, 5));
  while (/(reading [a-z ]+|searching "[^"]*")…/.test(h.frame())) {
    if (Date.now() > end) assert.fail(`timed out loading; frame:\n${h.frame()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return h.frame();
}
const focused = (h: ModalHarness): string | undefined => h.store.getState().lanes[h.store.getState().focus];

test('Ctrl+O lists runs newest first, the current one marked; Enter lists its sessions; ← goes back', async () => {
  await withHistory(async ({ h, oldRunId }) => {
    await h.press('ctrl+o');
    await settle(h);
    await h.press('home');
    let f = h.frame();
    assert.match(f, /History · runs/);
    assert.match(f, /▶ .*2 sessions +\(untitled\) +\(current\)/);
    assert.match(f, /2026-01-02 10:00 +2 sessions +plan the garden/);
    await h.press('down', 'enter');
    await settle(h);
    f = h.frame();
    assert.match(f, new RegExp(`History · run ${oldRunId}`));
    assert.match(f, /user → ur-agent · default +2 msgs/);
    assert.match(f, /ur-agent → scribe · notes +2 msgs/);
    await h.press('left');
    assert.match(h.frame(), /History · runs/);
  });
});

test('/ searches the highlighted run: hits listed with their session, the word highlighted; Enter shows it in the transcript', async () => {
  await withHistory(async ({ h, oldRunId }) => {
    await h.press('ctrl+o');
    await settle(h);
    await h.press('end');
    await h.type('/');
    assert.match(h.frame(), /\/ /);
    await h.type('TOMATOES');
    await h.press('enter');
    await settle(h);
    const f = h.frame();
    assert.match(f, new RegExp(`"TOMATOES" in run ${oldRunId} · 2 hits`));
    assert.match(f, /▶ ur-agent → scribe · notes +note: tomatoes need water/);
    assert.match(f, /user → ur-agent · default +Tomatoes go in the sunny bed\./);
    // Highlighted: the matched text is drawn inverse.
    // On the highlighted row (itself inverse) the hit is coloured and bold; elsewhere inverse.
    assert.match(h.rawFrame(), /\x1b\[33m\x1b\[1mtomatoes\x1b\[22m\x1b\[39m/);
    assert.match(h.rawFrame(), /\x1b\[7mTomatoes\x1b\[27m/);
    await h.press('down', 'enter');
    await settle(h);
    const t = h.frame();
    assert.match(t, /user → ur-agent · default · run .* \(read-only\)/);
    assert.match(t, /Tomatoes go in the sunny bed\./);
    assert.match(t, /Basil next to them\./);
    assert.match(t, /n\/N hit/);
    // ← goes back to the hits.
    await h.press('left');
    assert.match(h.frame(), /2 hits/);
  });
});

test('search in the current run reads the core; Enter in its transcript opens the session in a focused lane', async () => {
  await withHistory(async ({ h }) => {
    await h.press('ctrl+o');
    await settle(h);
    await h.type('/');
    await h.type('pelican');
    await h.press('enter');
    await settle(h);
    const f = h.frame();
    assert.match(f, /"pelican" in run 2026-03-01T09-00-00-live \(current\) · 3 hits/);
    assert.match(f, /ur-agent → scout · web +find pelican facts/);
    await h.press('enter');
    await settle(h);
    assert.match(h.frame(), /Enter open in lane/);
    await h.press('enter');
    assert.equal(h.store.getState().modal, null);
    assert.equal(focused(h), sessionIdOf('ur-agent', 'scout', 'web'));
  });
});

test('an older run without switchRun is read-only: Enter says how to resume it', async () => {
  await withHistory(async ({ h, oldRunId }) => {
    await h.press('ctrl+o');
    await settle(h);
    await h.press('end', 'enter');
    await settle(h);
    await h.press('enter');
    await settle(h);
    await h.press('enter');
    assert.equal(h.store.getState().modal?.kind, 'history');
    assert.match(h.frame(), new RegExp(`run ${oldRunId} is read-only here: resume it with \`legion --run ${oldRunId}\``));
  });
});

test('opening a session of an older run resumes that run through switchRun', async () => {
  await withHistory(async ({ h, oldRunId, switches }) => {
    await h.press('ctrl+o');
    await settle(h);
    await h.press('end', 'enter');
    await settle(h);
    // From the sessions list, `o` opens directly (the first is the most recent).
    await h.press('down');
    const selected = h.frame().split('\n').find((l) => l.includes('▶'))!;
    const sessionId = selected.includes('scribe') ? sessionIdOf('ur-agent', 'scribe', 'notes') : sessionIdOf('user', 'ur-agent');
    await h.type('o');
    assert.deepEqual(switches, [{ runId: oldRunId, sessionId }]);
    assert.equal(h.store.getState().modal, null);
    assert.match(h.frame(), new RegExp(`resuming run ${oldRunId}`));
  }, { switchRun: true });
});

test('Esc while typing a search goes back; Esc closes; a search without hits says so', async () => {
  await withHistory(async ({ h }) => {
    await h.press('ctrl+o');
    await settle(h);
    await h.type('/');
    await h.type('zebra');
    await h.press('escape');
    assert.equal(h.store.getState().modal?.kind, 'history');
    assert.match(h.frame(), /History · runs/);
    await h.type('/');
    assert.match(h.frame(), /\/ zebra/);
    await h.press('enter');
    await settle(h);
    assert.match(h.frame(), /No transcript of this run mentions "zebra"\./);
    await h.press('escape');
    assert.equal(h.store.getState().modal, null);
  });
});

test('transcript: n / N jump between hits, PgDn scrolls', async () => {
  const core = createFakeCore({ runId: 'run-live' });
  const long = Array.from({ length: 60 }, (_, i) => msg(i % 2 ? 'assistant' : 'user', i === 5 || i === 50 ? `needle ${i}` : `line ${i}`, `2026-03-01T09:00:${String(i).padStart(2, '0')}.000Z`));
  core.seed({ initiatorId: 'user', responderId: 'ur-agent' }, long);
  const h = await renderModals({ core, columns: 100, rows: 24 });
  try {
    await h.press('ctrl+o');
    await settle(h);
    await h.type('/');
    await h.type('needle');
    await h.press('enter');
    await settle(h);
    assert.match(h.frame(), /2 hits/);
    await h.press('enter');
    await settle(h);
    assert.match(h.frame(), /needle 5/);
    assert.doesNotMatch(h.frame(), /needle 50/);
    await h.type('n');
    assert.match(h.frame(), /needle 50/);
    await h.type('N');
    assert.match(h.frame(), /needle 5\b/);
    await h.press('home');
    assert.match(h.frame(), /user → ur-agent/);
    await h.press('pagedown', 'pagedown');
    assert.doesNotMatch(h.frame(), /line 1\b/);
  } finally {
    h.unmount();
  }
});

test('Enter in a transcript that is still loading opens that session (the key is not lost)', async () => {
  await withHistory(async ({ h, oldRunId, switches }) => {
    await h.press('ctrl+o');
    await settle(h);
    await h.press('end', 'enter');
    await settle(h);
    const selected = h.frame().split('\n').find((l) => l.includes('▶'))!;
    const sessionId = selected.includes('scribe') ? sessionIdOf('ur-agent', 'scribe', 'notes') : sessionIdOf('user', 'ur-agent');
    await h.press('enter');
    assert.match(h.frame(), /reading the transcript…/);
    await h.press('enter');
    assert.deepEqual(switches, [{ runId: oldRunId, sessionId }]);
  }, { switchRun: true, transcriptNeverLoads: true });
});
