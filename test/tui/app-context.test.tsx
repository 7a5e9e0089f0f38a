import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderApp } from '../helpers/tui-app';
import { createFakeCore, sessionIdOf } from '../helpers/fake-core';
import type { Message } from '../../src/model/message';

const U = sessionIdOf('user', 'ur-agent');
const at = '2026-01-01T00:00:00.000Z';
const said = (role: Message['role'], text: string): Message => ({ role, content: [{ type: 'text', text }], at });

test('lane header shows ctx %; a summary is one folded row that Ctrl+T unfolds to the summary (docs/context.md)', async () => {
  const core = createFakeCore();
  core.seed({ initiatorId: 'user', responderId: 'ur-agent' }, [said('user', 'hi'), said('assistant', 'hello')]);
  const t = await renderApp({ core, columns: 140 });
  try {
    assert.doesNotMatch(t.frame(), /ctx \d+%/);
    await t.emit({ type: 'context-size', sessionId: U, participantId: 'ur-agent', tokens: 52_480, window: 128_000 });
    assert.match(t.frame(), /user → ur-agent · default {2}idle ─+ ctx 41%/);
    await t.emit({
      type: 'compaction', sessionId: U, participantId: 'ur-agent', kind: 'summary', firstKept: 142,
      tokensBefore: 48_000, tokensAfter: 9_000, summary: '## Goal\nShip the parser.\n## Open tasks\nWrite the tests.',
    });
    let f = t.frame();
    assert.match(f, /⋯ 142 messages summarized · 48k → 9k tokens/);
    assert.doesNotMatch(f, /Ship the parser/);
    assert.match(f, /ctx 7%/, 'the header follows the compaction');
    await t.press('ctrl+t');
    f = t.frame();
    assert.match(f, /Ship the parser\./);
    assert.match(f, /Write the tests\./);
    // An eviction moves ctx % without a row; the next summary counts from the previous one.
    await t.emit({ type: 'compaction', sessionId: U, participantId: 'ur-agent', kind: 'eviction', firstKept: 150, tokensBefore: 9_000, tokensAfter: 6_400 });
    assert.match(t.frame(), /ctx 5%/);
    await t.emit({ type: 'compaction', sessionId: U, participantId: 'ur-agent', kind: 'summary', firstKept: 200, tokensBefore: 70_000, tokensAfter: 8_000, summary: 'later' });
    assert.match(t.frame(), /⋯ 58 messages summarized · 70k → 8k tokens/);
  } finally { t.unmount(); }
});

test('Ctrl+L asks the core to compact the focused session now; the help lists the key', async () => {
  const core = createFakeCore();
  core.seed({ initiatorId: 'user', responderId: 'ur-agent' }, [said('user', 'hi'), said('assistant', 'hello')]);
  const asked: string[] = [];
  (core as { compact?: (id: string) => Promise<{ ok: true; text: string }> }).compact = async (id) => {
    asked.push(id);
    return { ok: true, text: 'compacted' };
  };
  const t = await renderApp({ core, columns: 140 });
  try {
    await t.press('ctrl+l');
    assert.deepEqual(asked, [U]);
    assert.match(t.frame(), /compacting ur-agent's context…/);
    await t.press('f1');
    assert.match(t.frame(), /ctrl\+l.*compact the focused session's context now/i);
  } finally { t.unmount(); }
});
