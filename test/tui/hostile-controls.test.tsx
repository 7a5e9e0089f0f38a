import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderApp } from '../helpers/tui-app';
import { assistant, sessionIdOf } from '../helpers/fake-core';

const U = sessionIdOf('user', 'ur-agent');
// OSC 52 (write the clipboard), 7-bit and C1 forms, and a cursor move: what a hostile model or
// tool would put in any string the TUI shows.
const OSC52 = '\x1b]52;c;ZWNobyBwd25lZA==\x07';
const C1 = '\x9d52;c;ZWNobyBwd25lZA==\x9c';
const CURSOR = '\x1b[2A\x9b2A';

/** The frame as written, minus the SGR styles Legion itself adds: nothing else may remain. */
function controlsIn(raw: string): string[] {
  return [...raw.replace(/\x1b\[[0-9;]*m/g, '').matchAll(/[\x00-\x08\x0b-\x1f\x7f-\x9f]/g)].map((m) => JSON.stringify(m[0]));
}

test('a tool name a model wrote reaches the screen without its control sequences', async () => {
  const t = await renderApp();
  try {
    const name = `shell${OSC52}${C1}${CURSOR}`;
    await t.emit(
      assistant(U, [{ type: 'tool_use', id: 't1', name, input: { command: `ls${OSC52}` } }]),
      { type: 'tool-call-start', sessionId: U, participantId: 'ur-agent', toolUseId: 't1', name, input: { command: 'ls' } },
    );
    assert.match(t.frame(), /⚙ shell52;c;ZWNobyBwd25lZA==52;c;ZWNobyBwd25lZA==/);
    assert.deepEqual(controlsIn(t.rawFrame()), []);
  } finally { t.unmount(); }
});
