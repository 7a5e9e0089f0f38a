import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderApp } from '../helpers/tui-app';
import { sessionIdOf, status, text, userMessage } from '../helpers/fake-core';
import { headersBuiltSoFar } from '../../components/lanes/lane-header';
import { SPINNER_MS } from '../../components/use-spinner';

const U = sessionIdOf('user', 'ur-agent');
const headerOf = (frame: string): string => frame.split('\n').find((l) => l.includes('user → ur-agent')) ?? '';

test('a streamed frame does not build the lane header again; a spinner frame, a status or the tokens do', async () => {
  const t = await renderApp({ columns: 120, rows: 30 });
  try {
    await t.emit(userMessage(U, 'write a long answer'), status(U, 'ur-agent', 'thinking'));
    const first = headerOf(t.frame());
    assert.match(first, /thinking/);
    const before = headersBuiltSoFar();
    const words = 'the quick brown fox jumps over the lazy dog '.split(' ');
    for (let i = 0; i < 40; i++) await t.emit(text(U, 'ur-agent', `${words[i % words.length]} `));
    assert.match(t.frame(), /the quick brown fox/);
    assert.equal(headersBuiltSoFar() - before, 0, 'deltas change none of the header facts');
    assert.equal(headerOf(t.frame()), first);

    // The spinner's next frame (the clock moved) is a new header, built once.
    t.clock.now += SPINNER_MS;
    await t.emit(text(U, 'ur-agent', 'more '));
    const spun = headerOf(t.frame());
    assert.notEqual(spun, first);
    assert.equal(headersBuiltSoFar() - before, 1);
    for (let i = 0; i < 10; i++) await t.emit(text(U, 'ur-agent', 'and more '));
    assert.equal(headersBuiltSoFar() - before, 1);
    // Back to the first spinner frame: the kept header, not a new one.
    t.clock.now -= SPINNER_MS;
    await t.emit(text(U, 'ur-agent', 'again '));
    assert.equal(headerOf(t.frame()), first);
    assert.equal(headersBuiltSoFar() - before, 1);

    // Facts the header shows do change it.
    await t.emit({ type: 'usage', sessionId: U, participantId: 'ur-agent', model: 'm', inputTokens: 1200, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.001 });
    assert.match(headerOf(t.frame()), /1\.2k tok/);
    await t.emit(status(U, 'ur-agent', 'running-tool', 'reading a.ts'));
    assert.match(headerOf(t.frame()), /reading a\.ts/);
    await t.emit(status(U, 'ur-agent', 'idle'));
    assert.doesNotMatch(headerOf(t.frame()), /thinking|reading/);
  } finally {
    t.unmount();
  }
});
