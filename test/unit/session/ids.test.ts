import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkSessionName, isSafeRunId, makeRunId, parseSessionId, randomIds, sessionIdOf, DEFAULT_SESSION_NAME } from '../../../src/session/ids';

test('sessionIdOf / parseSessionId round trip, names with dots, dashes and underscores', () => {
  for (const key of [
    { initiatorId: 'user', responderId: 'ur-agent', name: DEFAULT_SESSION_NAME },
    { initiatorId: 'ur-agent', responderId: 'scribe', name: 'files' },
    { initiatorId: 'a1', responderId: 'b-2', name: 'v1.2_draft-3' },
    { initiatorId: 'a', responderId: 'b', name: 'x__y' },
  ]) {
    const id = sessionIdOf(key);
    assert.equal(id, `session-${key.initiatorId}__${key.responderId}__${key.name}`);
    assert.deepEqual(parseSessionId(id), key);
  }
  assert.equal(sessionIdOf({ initiatorId: 'user', responderId: 'ur-agent', name: 'default' }), 'session-user__ur-agent__default');
});

test('parseSessionId refuses what is not a session id', () => {
  for (const bad of ['', 'user__ur-agent__default', 'session-user__ur-agent', 'session-User__x__default', 'session-a__b__', 'session-a__b__-x', 'session-a_b__c__d', 'session-a__b__../x', 'session-a__b__' + 'n'.repeat(42)]) {
    assert.equal(parseSessionId(bad), null, bad);
  }
});

test('session names: [a-z0-9][a-z0-9._-]{0,40}; invalid keys throw', () => {
  assert.equal(checkSessionName('default'), null);
  assert.equal(checkSessionName('n'.repeat(41)), null);
  for (const bad of ['', 'n'.repeat(42), 'Files', '-x', '.x', 'a b', 'a/b', 'é']) assert.match(checkSessionName(bad) ?? '', /invalid session name/, bad);
  assert.throws(() => sessionIdOf({ initiatorId: 'user', responderId: 'x', name: 'A' }), /invalid session name/);
  assert.throws(() => sessionIdOf({ initiatorId: 'us_er', responderId: 'x', name: 'a' }), /invalid initiator/);
  assert.throws(() => sessionIdOf({ initiatorId: 'user', responderId: '../x', name: 'a' }), /invalid responder/);
});

test('run ids sort by creation time and carry the token', () => {
  const a = makeRunId(new Date('2026-11-21T19:30:00.999Z'), 'zzz999');
  const b = makeRunId(new Date('2026-11-21T19:30:01.000Z'), 'aaa000');
  const c = makeRunId(new Date('2027-01-02T03:04:05.000Z'), 'abc123');
  assert.equal(a, '2026-11-21T19-30-00-zzz999');
  assert.equal(c, '2027-01-02T03-04-05-abc123');
  assert.deepEqual([c, a, b].sort(), [a, b, c]);
  assert.ok(isSafeRunId(a));
  assert.throws(() => makeRunId(new Date(), 'A/B'), /invalid token/);
});

test('isSafeRunId refuses path tricks; randomIds gives fresh lowercase tokens', () => {
  for (const bad of ['', '..', '../x', 'a/b', 'a\\b', '.hidden', 'a..b', 'x'.repeat(200)]) assert.equal(isSafeRunId(bad), false, bad);
  const seen = new Set(Array.from({ length: 200 }, () => randomIds()));
  assert.ok(seen.size > 195);
  for (const t of seen) assert.match(t, /^[a-z0-9]{6}$/);
});
