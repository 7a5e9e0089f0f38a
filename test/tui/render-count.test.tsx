import { test } from 'node:test';
import assert from 'node:assert/strict';
import { watchRenders } from '../helpers/render-count';
import { renderApp } from '../helpers/tui-app';
import { sessionIdOf, status, text, userMessage } from '../helpers/fake-core';
import { StatusBar } from '../../components/StatusBar';
import { Lane } from '../../components/lanes/Lane';
import { Composer } from '../../components/composer/Composer';
import { HintLine } from '../../components/App';

const renders = watchRenders();
const U = sessionIdOf('user', 'ur-agent');

test('a streamed frame renders the streaming lane only: not the status bar, the hint line or the composer', async () => {
  const t = await renderApp({ columns: 120, rows: 30 });
  try {
    await t.emit(userMessage(U, 'write a long answer'), status(U, 'ur-agent', 'thinking'));
    renders.reset();
    const words = 'the quick brown fox jumps over the lazy dog '.split(' ');
    for (let i = 0; i < 40; i++) await t.emit(text(U, 'ur-agent', `${words[i % words.length]} `));
    assert.match(t.frame(), /the quick brown fox/);
    assert.ok(renders.of(Lane) >= 40, `the lane renders each frame (${renders.of(Lane)})`);
    assert.equal(renders.of(StatusBar), 0, 'the status bar shows nothing a delta changes');
    assert.equal(renders.of(HintLine), 0, 'nor the hint line');
    assert.equal(renders.of(Composer), 0, 'nor the composer');

    // What the status bar shows does change it: the token totals of a usage event.
    await t.emit({ type: 'usage', sessionId: U, participantId: 'ur-agent', model: 'm', inputTokens: 1200, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.001 });
    assert.equal(renders.of(StatusBar), 1);
    assert.match(t.frame(), /1\.2k tok/);
  } finally {
    t.unmount();
  }
});
