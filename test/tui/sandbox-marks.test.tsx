import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderApp } from '../helpers/tui-app';
import { assistant, open, sessionIdOf } from '../helpers/fake-core';
import { renderModals, request } from './modals/harness';
import type { EventInput } from '../../src/events/types';

const U = sessionIdOf('user', 'ur-agent');

test('tool rows say whether a shell call runs sandboxed; tools that start no process say nothing', async () => {
  const t = await renderApp();
  try {
    const shell = { command: 'npm test' };
    const write = { path: 'a.md', content: 'x' };
    await t.emit(
      assistant(U, [
        { type: 'tool_use', id: 't1', name: 'shell', input: shell },
        { type: 'tool_use', id: 't2', name: 'shell', input: { command: 'make' } },
        { type: 'tool_use', id: 't3', name: 'file_write', input: write },
      ]),
      { type: 'tool-call-start', sessionId: U, participantId: 'ur-agent', toolUseId: 't1', name: 'shell', input: shell, sandboxed: true },
      { type: 'tool-call-start', sessionId: U, participantId: 'ur-agent', toolUseId: 't2', name: 'shell', input: { command: 'make' }, sandboxed: false },
      { type: 'tool-call-start', sessionId: U, participantId: 'ur-agent', toolUseId: 't3', name: 'file_write', input: write },
    );
    assert.match(t.frame(), /⚙ shell npm test \[sandboxed\] ○$/m);
    assert.match(t.frame(), /⚙ shell make \[no sandbox\] ○$/m);
    assert.match(t.frame(), /⚙ file_write a\.md ○$/m);
    await t.emit({ type: 'tool-call-end', sessionId: U, participantId: 'ur-agent', toolUseId: 't1', name: 'shell', isError: false, summary: 'npm test: exit 0 (1.0 s)' });
    assert.match(t.frame(), /⚙ shell npm test \[sandboxed\] ✓ npm test: exit 0/);
  } finally { t.unmount(); }
});

test('the approval queue shows whether each shell request will run sandboxed, in the list and the details', async () => {
  const h = await renderModals();
  try {
    await h.emit(open('ur-agent', 'scribe', 'notes'));
    await h.emit(
      { ...request({ requestId: 'r1', toolName: 'shell', input: { command: 'npm test' }, ruleId: 'shell-ask', reason: 'Shell asks' }), sandboxed: true } as EventInput,
      { ...request({ requestId: 'r2', toolName: 'shell', input: { command: 'make' }, ruleId: 'shell-ask', reason: 'Shell asks' }), sandboxed: false } as EventInput,
      request({ requestId: 'r3', input: { path: 'n.md', content: 'x' } }),
    );
    const f = h.frame();
    assert.match(f, /shell npm test {2}· rule shell-ask: Shell asks · sandboxed/);
    assert.match(f, /shell make {2}· rule shell-ask: Shell asks · NO SANDBOX/);
    assert.doesNotMatch(f, /file_write n\.md .*sandbox/i);
    await h.press('enter');
    assert.match(h.frame(), /runs {5}in the sandbox/);
    await h.press('escape', 'down', 'enter');
    assert.match(h.frame(), /runs {5}WITHOUT a sandbox/);
  } finally { h.unmount(); }
});
