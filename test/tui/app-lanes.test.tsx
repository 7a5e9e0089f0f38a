import '../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderApp } from '../helpers/tui-app';
import { open, text, status, assistant, userMessage, sessionIdOf } from '../helpers/fake-core';

const U = sessionIdOf('user', 'ur-agent');
const S = sessionIdOf('ur-agent', 'scribe', 'files');

test('first frame: the user lane, composer, key hints and status bar', async () => {
  const t = await renderApp({ demo: true, providerLabel: 'demo' });
  try {
    const f = t.frame();
    assert.match(f, /DEMO — no API key: set ANTHROPIC_API_KEY or OPENAI_API_KEY/);
    assert.match(f, /▶ user → ur-agent · default {2}idle/);
    assert.match(f, /› {2}message ur-agent… {2}\(F1 help\)/);
    assert.match(f, /Enter send {2}· Ctrl\+J newline/);
    assert.match(f, /legion · run run-test · DEMO · 0 tok \$0/);
    assert.equal(f.split('\n').length, 39, 'one row less than the terminal');
  } finally { t.unmount(); }
});

test('streamed deltas show as they arrive; the final message replaces them', async () => {
  const t = await renderApp();
  try {
    await t.emit(userMessage(U, 'hi'), status(U, 'ur-agent', 'thinking'), text(U, 'ur-agent', 'Hel'));
    assert.match(t.frame(), /[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] thinking/);
    assert.match(t.frame(), /^Hel\s*$/m);
    await t.emit(text(U, 'ur-agent', 'lo **world**'));
    assert.match(t.frame(), /^Hello world\s*$/m);
    await t.emit(assistant(U, [{ type: 'text', text: 'Hello **world**' }]), status(U, 'ur-agent', 'idle'));
    assert.equal(t.frame().match(/Hello world/g)?.length, 1);
    assert.match(t.frame(), /user → ur-agent · default {2}idle/);
  } finally { t.unmount(); }
});

test('a delegate opens its lane beside the user lane; the user lane shows its activity row', async () => {
  const t = await renderApp();
  try {
    await t.emit(
      status(U, 'ur-agent', 'running-tool', 'communicator'),
      open('ur-agent', 'scribe', 'files'),
      userMessage(S, 'write the docs'),
      status(S, 'scribe', 'thinking'),
      text(S, 'scribe', 'On it.'),
    );
    const f = t.frame();
    const header = f.split('\n')[0]!;
    assert.match(header, /▶ user → ur-agent · default {2}[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] running communicator.*│ {2}ur-agent → scribe · files {2}[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] thinking.*read-only/);
    assert.match(f, /↳ ur-agent → scribe · files {2}[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] thinking/);
    assert.match(f, /│› write the docs/);
    assert.match(f, /│On it\./);
    await t.emit(status(S, 'scribe', 'idle'), status(U, 'ur-agent', 'idle'));
    assert.doesNotMatch(t.frame(), /↳/, 'no activity row when no delegate works');
  } finally { t.unmount(); }
});

test('layout: side by side when wide, 2×2 at 120 columns, stacked when narrow', async () => {
  const t = await renderApp({ columns: 170 });
  try {
    await t.emit(open('ur-agent', 'scribe', 'a'), open('ur-agent', 'scribe', 'b'), open('ur-agent', 'scribe', 'c'));
    const headers = (): string[] => t.frame().split('\n').filter((l) => /→/.test(l) && !/^›/.test(l));
    assert.equal(headers().length, 1, '4 lanes in one row at 170 columns');
    assert.equal(headers()[0]!.split('│').length, 4);
    await t.resize(120, 40);
    assert.equal(headers().length, 2, '2 rows of 2 at 120 columns');
    await t.resize(60, 40);
    assert.equal(headers().length, 4, 'stacked at 60 columns');
    assert.ok(t.frame().split('\n').every((l) => l.length <= 60));
  } finally { t.unmount(); }
});

test('Tab and Shift+Tab move the focus between lanes', async () => {
  const t = await renderApp();
  try {
    await t.emit(open('ur-agent', 'scribe', 'files'));
    await t.press('tab');
    assert.match(t.frame().split('\n')[0]!, /│▶ ur-agent → scribe/);
    assert.match(t.frame(), /read-only: ur-agent → scribe \(agents talking\)/);
    await t.press('shift+tab');
    assert.match(t.frame().split('\n')[0]!, /^▶ user → ur-agent/);
  } finally { t.unmount(); }
});

test('tool calls are compact rows; Ctrl+T unfolds their results', async () => {
  const t = await renderApp();
  try {
    const input = { path: 'docs/a.md', content: '# A' };
    await t.emit(
      assistant(U, [{ type: 'text', text: 'Writing.' }, { type: 'tool_use', id: 't1', name: 'file_write', input }]),
      { type: 'tool-call-start', sessionId: U, participantId: 'ur-agent', toolUseId: 't1', name: 'file_write', input },
    );
    assert.match(t.frame(), /⚙ file_write docs\/a\.md ○$/m);
    await t.emit(
      { type: 'tool-call-end', sessionId: U, participantId: 'ur-agent', toolUseId: 't1', name: 'file_write', isError: false, summary: 'wrote 1 line' },
      userMessage(U, [{ type: 'tool_result', toolUseId: 't1', content: 'first result line\nsecond result line' }]),
    );
    assert.match(t.frame(), /⚙ file_write docs\/a\.md ✓ wrote 1 line/);
    assert.doesNotMatch(t.frame(), /second result line/);
    await t.press('ctrl+t');
    assert.match(t.frame(), /^ {2}first result line/m);
    assert.match(t.frame(), /^ {2}second result line/m);
    await t.press('ctrl+t');
    assert.doesNotMatch(t.frame(), /second result line/);
  } finally { t.unmount(); }
});

test('header shows waiting approval, error and per-lane tokens/cost', async () => {
  const t = await renderApp();
  try {
    await t.emit(
      { type: 'usage', sessionId: U, participantId: 'ur-agent', model: 'm', inputTokens: 1200, outputTokens: 300, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0.0123 },
      status(U, 'ur-agent', 'waiting-approval'),
    );
    assert.match(t.frame().split('\n')[0]!, /waiting approval .*1\.5k tok \$0\.012/);
    await t.emit(status(U, 'ur-agent', 'error', 'provider: 500'));
    assert.match(t.frame().split('\n')[0]!, /error: provider: 500/);
  } finally { t.unmount(); }
});

test('a fifth session takes the oldest idle lane and stays reachable', async () => {
  const t = await renderApp({ columns: 170 });
  try {
    for (const n of ['a', 'b', 'c', 'd']) await t.emit(open('ur-agent', 'scribe', n));
    const header = t.frame().split('\n')[0]!;
    assert.doesNotMatch(header, /scribe · a/);
    assert.match(header, /scribe · d/);
    assert.equal(t.store.getState().order.length, 5);
  } finally { t.unmount(); }
});
