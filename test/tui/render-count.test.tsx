import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { watchRenders } from '../helpers/render-count';
import { renderApp, tick } from '../helpers/tui-app';
import { loadHighlighter } from '../../components/markdown/highlight';
import { sessionIdOf, status, text, userMessage } from '../helpers/fake-core';
import { StatusBar } from '../../components/StatusBar';
import { Lane } from '../../components/lanes/Lane';
import { Composer } from '../../components/composer/Composer';
import { App, HintLine } from '../../components/App';
import { LaneGrid } from '../../components/lanes/LaneGrid';
import { createFakeCore } from '../helpers/fake-core';

const renders = watchRenders();

/**
 * The App renders once when code highlighting has loaded (after the first frame: a lazy import
 * that takes longer on a loaded machine); counts start after that render, so that it never
 * falls among the deltas counted.
 */
async function highlighterLoaded(): Promise<void> {
  await loadHighlighter();
  await tick();
}
const U = sessionIdOf('user', 'ur-agent');

test('a streamed frame renders the streaming lane only: not the status bar, the hint line or the composer', async () => {
  const t = await renderApp({ columns: 120, rows: 30 });
  try {
    await t.emit(userMessage(U, 'write a long answer'), status(U, 'ur-agent', 'thinking'));
    await highlighterLoaded();
    renders.reset();
    const words = 'the quick brown fox jumps over the lazy dog '.split(' ');
    for (let i = 0; i < 40; i++) await t.emit(text(U, 'ur-agent', `${words[i % words.length]} `));
    assert.match(t.frame(), /the quick brown fox/);
    assert.ok(renders.of(Lane) >= 40, `the lane renders each frame (${renders.of(Lane)})`);
    assert.equal(renders.of(StatusBar), 0, 'the status bar shows nothing a delta changes');
    assert.equal(renders.of(HintLine), 0, 'nor the hint line');
    assert.equal(renders.of(Composer), 0, 'nor the composer');
    assert.equal(renders.of(App), 0, 'nor the App: the lane reads its session from the store (UiStore.getOutline)');
    assert.equal(renders.of(LaneGrid), 0, 'nor the lane grid');

    // What the status bar shows does change it: the token totals of a usage event.
    await t.emit({ type: 'usage', sessionId: U, participantId: 'ur-agent', model: 'm', inputTokens: 1200, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.001 });
    assert.equal(renders.of(StatusBar), 1);
    assert.match(t.frame(), /1\.2k tok/);
  } finally {
    t.unmount();
  }
});

test('while a delegate streams, the user lane\'s activity row names the busy delegate that was active last (its lastActivity moves with its deltas)', async () => {
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const core = createFakeCore({ now: () => new Date((clock += 1000)) });
  const t = await renderApp({ core, columns: 160, rows: 30 });
  const A = sessionIdOf('ur-agent', 'scribe', 'notes');
  const B = sessionIdOf('ur-agent', 'critic', 'review');
  try {
    await t.emit(userMessage(U, 'delegate'), status(U, 'ur-agent', 'running-tool', 'communicator'));
    await t.emit({ type: 'session-open', sessionId: A, initiatorId: 'ur-agent', responderId: 'scribe', name: 'notes' }, status(A, 'scribe', 'thinking'));
    await t.emit({ type: 'session-open', sessionId: B, initiatorId: 'ur-agent', responderId: 'critic', name: 'review' }, status(B, 'critic', 'thinking'));
    assert.match(t.frame(), /↳ ur-agent → critic · review/, 'the last one active first');
    await highlighterLoaded();
    renders.reset();
    await t.emit(text(A, 'scribe', 'a note'));
    assert.equal(renders.of(App), 0, 'a delta does not render the App');
    assert.match(t.frame(), /↳ ur-agent → scribe · notes/, 'the streaming delegate is now the last active');
    assert.match(t.frame(), /a note/);
    await t.emit(text(B, 'critic', 'a review'));
    assert.match(t.frame(), /↳ ur-agent → critic · review/);
  } finally {
    t.unmount();
  }
});
