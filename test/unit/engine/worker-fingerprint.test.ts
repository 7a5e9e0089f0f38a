import '../../helpers/own-home';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { changedFiles, restamped, workspaceFingerprint } from '../../../src/cli/worker-fingerprint';
import { layoutFor } from '../../../src/storage/layout';

/** A turn's end restamps its own session file only (docs/engine.md#a-turn-on-a-worker). */
test('a restamped fingerprint holds the turn\'s session file as it is now and every other file as it was', () => {
  const root = mkdtempSync(join(tmpdir(), 'legion-fingerprint-'));
  try {
    const layout = layoutFor(root);
    const env = { HOME: root, XDG_CONFIG_HOME: join(root, 'xdg') };
    mkdirSync(layout.sessionsDir('r1'), { recursive: true });
    const [a, b, c] = ['a', 'b', 'c'].map((n) => layout.sessionFile('r1', `session-user__builder__${n}`)) as [string, string, string];
    writeFileSync(a, 'line\n');
    writeFileSync(b, 'line\n');
    const built = workspaceFingerprint(root, 'r1', env);
    const none = new Set<string>();

    appendFileSync(a, 'the turn\'s line\n');
    const afterA = restamped(built, a);
    assert.deepEqual(changedFiles(afterA, workspaceFingerprint(root, 'r1', env), none), [], 'only the turn\'s own file changed: the same as a full scan');

    appendFileSync(b, 'written elsewhere\n');
    appendFileSync(a, 'the next turn\'s line\n');
    assert.deepEqual(changedFiles(restamped(afterA, a), workspaceFingerprint(root, 'r1', env), none), [b], 'another file written meanwhile is still seen changed');

    writeFileSync(c, 'a new session\n');
    const withC = restamped(restamped(afterA, a), c);
    assert.deepEqual(changedFiles(withC, workspaceFingerprint(root, 'r1', env), none), [b], 'a file the turn created is added');
    rmSync(c);
    assert.deepEqual(changedFiles(restamped(withC, c), workspaceFingerprint(root, 'r1', env), none), [b], 'a file gone is left out, as a scan lists it');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a file or folder that appears after the fingerprint was taken is seen changed; one that stays absent is not', () => {
  const root = mkdtempSync(join(tmpdir(), 'legion-fingerprint-'));
  try {
    const layout = layoutFor(root);
    const env = { HOME: root, XDG_CONFIG_HOME: join(root, 'xdg') };
    mkdirSync(layout.sessionsDir('r1'), { recursive: true });
    const before = workspaceFingerprint(root, 'r1', env);
    const none = new Set<string>();
    assert.deepEqual(changedFiles(before, workspaceFingerprint(root, 'r1', env), none), [], 'nothing there twice: no change');
    writeFileSync(layout.approvals('r1'), '[]\n');
    mkdirSync(join(root, 'xdg', 'legion', 'agents'), { recursive: true });
    const agent = join(root, 'xdg', 'legion', 'agents', 'scribe.md');
    writeFileSync(agent, '---\nid: scribe\n---\n');
    assert.deepEqual(changedFiles(before, workspaceFingerprint(root, 'r1', env), none).sort(), [layout.approvals('r1'), agent].sort());
    rmSync(layout.approvals('r1'));
    assert.deepEqual(changedFiles(before, workspaceFingerprint(root, 'r1', env), none), [agent], 'gone again: as before');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
