import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderApp } from '../helpers/tui-app';
import { createFakeCore, sessionIdOf } from '../helpers/fake-core';
import { EMPTY_TOTALS, type UsageTotals } from '../../src/providers/usage-totals';
import type { Message } from '../../src/model/message';

const U = sessionIdOf('user', 'ur-agent');
const S = sessionIdOf('ur-agent', 'scribe', 'notes');
const at = '2026-01-01T00:00:00.000Z';
const said = (role: Message['role'], text: string): Message => ({ role, content: [{ type: 'text', text }], at });

function totals(input: number, output: number, costUsd: number | null, partial = false): UsageTotals {
  return { ...EMPTY_TOTALS, calls: 1, inputTokens: input, outputTokens: output, costUsd, partial };
}

test('a resumed run shows the token and cost totals from before the restart (status bar and lane headers); new usage adds to them', async () => {
  const core = createFakeCore({
    usage: {
      run: { ...totals(7_000, 1_345, 0.0423), calls: 3, cacheReadTokens: 1_000 },
      sessions: { [U]: { ...totals(6_000, 1_000, 0.04), cacheReadTokens: 1_000 }, [S]: totals(1_000, 345, 0.0023) },
    },
  });
  core.seed({ initiatorId: 'user', responderId: 'ur-agent' }, [said('user', 'hi'), said('assistant', 'hello')]);
  core.seed({ initiatorId: 'ur-agent', responderId: 'scribe', name: 'notes' }, [said('user', 'note it'), said('assistant', 'noted')]);
  const t = await renderApp({ core, columns: 160 });
  try {
    let f = t.frame();
    assert.match(f, /^legion · run run-test · faux test-model · 9\.3k tok \$0\.042$/m);
    assert.match(f, /user → ur-agent · default {2}idle ─+ 8k tok \$0\.040/);
    assert.match(f, /ur-agent → scribe · notes {2}idle ─+ read-only · 1\.3k tok \$0\.0023/);

    await t.emit({ type: 'usage', sessionId: U, participantId: 'ur-agent', model: 'm', inputTokens: 1000, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.001 });
    f = t.frame();
    assert.match(f, /· 10k tok \$0\.043$/m, 'the run total goes on from the earlier one');
    assert.match(f, /user → ur-agent · default {2}idle ─+ 9k tok \$0\.041/);
  } finally { t.unmount(); }
});

test('earlier totals with calls of unknown price keep the cost marked as a lower bound', async () => {
  const core = createFakeCore({ usage: { run: totals(500, 20, 0.01, true), sessions: { [U]: totals(500, 20, null, true) } } });
  core.seed({ initiatorId: 'user', responderId: 'ur-agent' }, [said('user', 'hi')]);
  const t = await renderApp({ core });
  try {
    const f = t.frame();
    assert.match(f, /· 520 tok \$0\.010\+\?$/m);
    assert.match(f, /user → ur-agent · default {2}idle ─+ 520 tok \$0\+\?/);
  } finally { t.unmount(); }
});
