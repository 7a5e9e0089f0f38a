import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderApp } from '../helpers/tui-app';
import { assistant, sessionIdOf } from '../helpers/fake-core';

const U = sessionIdOf('user', 'ur-agent');

test('an MCP tool row shows the progress the server reports, then its result', async () => {
  const t = await renderApp();
  try {
    const input = { duration: 10, steps: 5 };
    const name = 'mcp__everything__trigger-long-running-operation';
    await t.emit(
      assistant(U, [{ type: 'tool_use', id: 't1', name, input }]),
      { type: 'tool-call-start', sessionId: U, participantId: 'ur-agent', toolUseId: 't1', name, input },
      { type: 'tool-progress', sessionId: U, participantId: 'ur-agent', toolUseId: 't1', progress: 2, total: 5 },
    );
    assert.match(t.frame(), /⚙ mcp__everything__trigger-long-running-operation .* 2\/5$/m);
    await t.emit({ type: 'tool-progress', sessionId: U, participantId: 'ur-agent', toolUseId: 't1', progress: 0.4, total: 1, message: 'halfway' });
    assert.match(t.frame(), /40% halfway$/m);
    await t.emit({ type: 'tool-call-end', sessionId: U, participantId: 'ur-agent', toolUseId: 't1', name, isError: false, summary: 'Long running operation completed.' });
    assert.match(t.frame(), /✓ Long running operation completed\./);
    assert.doesNotMatch(t.frame(), /40%/);
  } finally { t.unmount(); }
});

test('a failed MCP server is marked in the status bar until it is back', async () => {
  const t = await renderApp({ columns: 160 });
  try {
    await t.emit({ type: 'mcp-status', server: 'github', state: 'failed', tools: [], error: 'spawn gh-mcp ENOENT' });
    assert.match(t.frame(), /mcp ✗ github/);
    await t.emit({ type: 'mcp-status', server: 'db', state: 'failed', tools: [] });
    assert.match(t.frame(), /mcp ✗ 2/);
    await t.emit({ type: 'mcp-status', server: 'github', state: 'ready', tools: ['mcp__github__x'] }, { type: 'mcp-status', server: 'db', state: 'ready', tools: [] });
    assert.doesNotMatch(t.frame(), /mcp ✗/);
  } finally { t.unmount(); }
});
