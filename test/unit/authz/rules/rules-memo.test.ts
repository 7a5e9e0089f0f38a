import '../../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAuthorizer, workspaceRealPath } from '../../../../src/authz/authorizer';
import { evaluateRules } from '../../../../src/authz/rules/evaluate';
import type { Participant } from '../../../../src/collective/participant';
import { rulesFrom, shippedRules } from '../../../helpers/rules';
import { withTempDir } from '../../../helpers/tmp';

/**
 * evaluate.ts remembers what depends only on strings (a call without a shell command; a shell
 * line's deny and ask phase) per tool's rules. The key must hold everything the outcome
 * depends on, and nothing read from the filesystem may be remembered.
 */
const USER: Participant = { id: 'user', kind: 'user', name: 'You', description: '', status: 'active', approvalAuthority: '*' };

test('a file replaced by a symlink to a secret between two decisions: the second is denied (remembered outcomes are lexical only)', async () => {
  await withTempDir(async (ws) => {
    mkdirSync(join(ws, 'docs'));
    writeFileSync(join(ws, '.env'), 'KEY=1\n');
    writeFileSync(join(ws, 'docs', 'notes.md'), 'notes\n');
    const authorize = createAuthorizer({ gitConfigPaths: () => [], ruleSet: shippedRules(), workspaceRoot: ws, getParticipant: () => USER, realPath: workspaceRealPath(ws) });
    const read = () => authorize({ toolName: 'file_read', input: { path: 'docs/notes.md' }, participantId: 'user', sessionId: 's', chain: ['user'] });
    const cat = () => authorize({ toolName: 'shell', input: { command: 'cat docs/notes.md' }, participantId: 'user', sessionId: 's', chain: ['user'] });
    assert.equal(read().decision, 'allow');
    assert.equal(cat().decision, 'allow');
    assert.equal(read().decision, 'allow');
    rmSync(join(ws, 'docs', 'notes.md'));
    symlinkSync('../.env', join(ws, 'docs', 'notes.md'));
    assert.equal(read().decision, 'deny');
    assert.notEqual(cat().decision, 'allow');
    rmSync(join(ws, 'docs', 'notes.md'));
    writeFileSync(join(ws, 'docs', 'notes.md'), 'notes\n');
    assert.equal(read().decision, 'allow');
    assert.equal(cat().decision, 'allow');
  });
});

test('the key holds the participant, the workspace, the tool and every field the rules read', () => {
  const rules = rulesFrom(`version: 1
rules:
  - { id: mine, decision: allow, tool: "file_read|file_write", participants: [agent-a], match: { path: "src/**" } }
  - { id: theirs, decision: deny, tool: file_read, participants: [agent-b] }
  - { id: to-docs, decision: ask, tool: communicator, match: { targetId: docs } }
  - { id: rm, decision: deny, tool: shell, participants: [agent-b], match: { command: "rm *" } }
`);
  const q = (toolName: string, input: unknown, participantId: string, workspaceRoot = '/ws') => evaluateRules(rules, { toolName, input, participantId, workspaceRoot }).ruleId;
  for (let round = 0; round < 2; round++) {
    assert.equal(q('file_read', { path: 'src/a.ts' }, 'agent-a'), 'mine');
    assert.equal(q('file_read', { path: 'src/a.ts' }, 'agent-b'), 'theirs');
    assert.equal(q('file_read', { path: 'src/a.ts' }, 'agent-c'), null);
    assert.equal(q('file_read', { path: '/ws/src/a.ts' }, 'agent-a'), 'mine');
    assert.equal(q('file_read', { path: '/ws/src/a.ts' }, 'agent-a', '/other'), null);
    assert.equal(q('file_write', { path: 'src/a.ts' }, 'agent-b'), null);
    assert.equal(q('communicator', { targetId: 'docs', message: 'a' }, 'agent-a'), 'to-docs');
    assert.equal(q('communicator', { targetId: 'qa', message: 'a' }, 'agent-a'), null);
    assert.equal(q('shell', { command: 'rm x' }, 'agent-b'), 'rm');
    assert.equal(q('shell', { command: 'rm x' }, 'agent-a'), null);
    assert.equal(q('shell', { command: 'rm y' }, 'agent-b'), 'rm');
  }
});

test('remembered outcomes are shared, so they are frozen; many distinct calls stay correct past the bound', () => {
  const rules = shippedRules();
  const outcome = evaluateRules(rules, { toolName: 'file_read', input: { path: '.env' }, participantId: 'a', workspaceRoot: '/ws' });
  assert.equal(outcome.decision, 'deny');
  assert.ok(Object.isFrozen(outcome));
  for (let i = 0; i < 5000; i++) {
    const path = i % 2 ? `src/f${i}.ts` : `k${i}/.env`;
    assert.equal(evaluateRules(rules, { toolName: 'file_read', input: { path }, participantId: 'a', workspaceRoot: '/ws' }).decision, i % 2 ? 'allow' : 'deny');
  }
});

test("a shell line's deny and ask outcome, remembered with the line, is told apart by rule set, participant and every other field the rules read", () => {
  const a = rulesFrom(`version: 1
rules:
  - { id: rm, decision: deny, tool: shell, participants: [agent-b], match: { command: "rm *" } }
  - { id: slow, decision: ask, tool: shell, match: { command: "sleep *", timeoutMs: "99999" } }
`);
  const b = rulesFrom(`version: 1
rules:
  - { id: rm-ask, decision: ask, tool: shell, match: { command: "rm *" } }
`);
  const q = (rules: typeof a, input: Record<string, unknown>, participantId: string) => evaluateRules(rules, { toolName: 'shell', input, participantId, workspaceRoot: '/ws' }).ruleId;
  for (let round = 0; round < 3; round++) {
    assert.equal(q(a, { command: 'rm x' }, 'agent-b'), 'rm');
    assert.equal(q(b, { command: 'rm x' }, 'agent-b'), 'rm-ask');
    assert.equal(q(a, { command: 'rm x' }, 'agent-a'), null);
    assert.equal(q(b, { command: 'rm x' }, 'agent-a'), 'rm-ask');
    assert.equal(q(a, { command: 'sleep 5', timeoutMs: 99999 }, 'agent-a'), 'slow');
    assert.equal(q(a, { command: 'sleep 5' }, 'agent-a'), null);
    assert.equal(q(a, { command: 'sleep 5', timeoutMs: 5 }, 'agent-a'), null);
  }
  // More callers of one line than it remembers (16): each still gets its own outcome.
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 40; i++) assert.equal(q(a, { command: 'rm y' }, i % 2 ? 'agent-b' : `agent-${i}`), i % 2 ? 'rm' : null);
  }
});

test("what file_read may read, remembered per participant and workspace for the read-only commands' paths, stays correct past its bound", () => {
  const rules = rulesFrom(`version: 1
rules:
  - { id: no-private, decision: deny, tool: file_read, participants: [agent-b], match: { path: "private/**" } }
  - { id: reads, decision: allow, tool: file_read }
  - { id: cat, decision: allow, tool: shell, match: { command: { readOnly: [cat] } } }
`);
  // Every path exists and is no link (the filesystem is not what this test is about).
  const realPath = (p: string) => p;
  const q = (path: string, participantId: string, workspaceRoot = '/ws') => evaluateRules(rules, { toolName: 'shell', input: { command: `cat ${path}` }, participantId, workspaceRoot, realPath }).decision;
  for (let i = 0; i < 5000; i++) {
    const path = `private/f${i % 2500}.txt`;
    assert.equal(q(path, 'agent-a'), 'allow', path);
    assert.equal(q(path, 'agent-b'), null, path);
    assert.equal(q(`/ws/${path}`, 'agent-b'), null, path);
    assert.equal(q(`/ws/${path}`, 'agent-a', '/elsewhere'), null, path);
  }
});

test("a shell line's remembered deny is shared between callers, so it is frozen: a caller cannot turn it into an allow for the next", () => {
  const rules = rulesFrom(`version: 1
rules:
  - { id: rm, decision: deny, tool: shell, match: { command: "rm *" } }
`);
  const q = () => evaluateRules(rules, { toolName: 'shell', input: { command: 'rm x' }, participantId: 'agent-a', workspaceRoot: '/ws' });
  for (let round = 0; round < 2; round++) {
    const denied = q();
    assert.ok(Object.isFrozen(denied));
    assert.throws(() => { (denied as { decision: string }).decision = 'allow'; }, TypeError);
  }
  assert.equal(q().decision, 'deny');
});
